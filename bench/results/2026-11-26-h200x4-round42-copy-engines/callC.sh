# Session 14 call C: the final copy-engine collectives (pushes one after another on a side stream, the local
# copy by SMs; AUTO: copies from 192 MiB pushed per rank, the ring all-reduce's gather from 96 MiB) against
# NCCL in the same run, 64 MiB - 512 MiB; the SM kernels (PEERLINK_COLL_CE=0) beside them; then the GPU tests.
source scripts/device/call-lib.sh c
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for c in all_gather all_to_all all_reduce; do
  timeout 100 dist/peerlink coll -o $c -b 64M -e 512M -f 2 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c auto: $?"
  PEERLINK_COLL_CE=0 timeout 60 dist/peerlink coll -o $c -b 128M -e 512M -f 2 --no-nccl --json $p/coll-$c-sm.json >$p/coll-$c-sm.txt 2>&1; echo "$c sm: $?"
  save
done
t ce-shared 100 dist/tests/gpu_test_communicator_shared --gtest_filter='CopyEngines*'
save
t ce-graph 150 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorGraph.CopyEngine*:CommunicatorGraph.BackToBack*:CommunicatorDeadline.*'
save
t ce-comm 240 dist/tests/gpu_test_communicator --gtest_filter='*CE*:EveryCollective/CommunicatorLarge.*'
save
