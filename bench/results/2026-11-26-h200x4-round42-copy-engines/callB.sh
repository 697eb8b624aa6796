# Session 14 call B: the copy-engine collectives, each push on its own stream and the local copy by SMs (PEERLINK_COLL_CE). Copy engines (=1) against SM kernels (=0)
# for all-gather, all-to-all and all-reduce 1 MiB - 512 MiB, NCCL in the copy-engine run; then the new GPU tests.
source scripts/device/call-lib.sh b
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for c in all_gather all_to_all; do
  PEERLINK_COLL_CE=1 timeout 100 dist/peerlink coll -o $c -b 1M -e 512M -f 2 --json $p/coll-$c-ce.json >$p/coll-$c-ce.txt 2>&1; echo "$c ce: $?"
  PEERLINK_COLL_CE=0 timeout 60 dist/peerlink coll -o $c -b 1M -e 512M -f 2 --no-nccl --json $p/coll-$c-sm.json >$p/coll-$c-sm.txt 2>&1; echo "$c sm: $?"
  save
done
PEERLINK_COLL_CE=1 timeout 100 dist/peerlink coll -o all_reduce -b 1M -e 512M -f 2 --json $p/coll-all_reduce-ce.json >$p/coll-all_reduce-ce.txt 2>&1; echo "ar ce: $?"
PEERLINK_COLL_CE=0 timeout 60 dist/peerlink coll -o all_reduce -b 1M -e 512M -f 2 --no-nccl --json $p/coll-all_reduce-sm.json >$p/coll-all_reduce-sm.txt 2>&1; echo "ar sm: $?"
PEERLINK_ALGO=TWOSHOT PEERLINK_COLL_CE=1 timeout 60 dist/peerlink coll -o all_reduce -b 64M -e 512M -f 2 --no-nccl --json $p/coll-all_reduce-ce-twoshot.json >$p/coll-all_reduce-ce-twoshot.txt 2>&1; echo "ar ce twoshot: $?"
save
t ce-graph 150 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorGraph.CopyEngine*:CommunicatorGraph.BackToBack*:CommunicatorDeadline.*'
save
t ce-comm 200 dist/tests/gpu_test_communicator --gtest_filter='*CE*'
save
t ce-shared 100 dist/tests/gpu_test_communicator_shared --gtest_filter='CopyEngines*'
save
