# Session 19 call D: every collective 8 B - 32 MiB against NCCL's three configurations, with the launch
# threads at their default (1000 us awake): the eager columns with the threads, the graph columns as before.
source scripts/device/call-lib.sh d
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for c in all_reduce all_gather reduce_scatter all_to_all broadcast reduce; do
  timeout 80 dist/peerlink coll -o $c -b 8 -e 32M -f 4 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c: $?"
  save
done
# What call C's 150 s limit left of the copy-engine tests (it had passed 11 of 14), threads kept awake.
export PEERLINK_COLL_LAUNCH_THREADS=10000000
t ce-rest 120 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/CE_RING_reduce_scatter:*/CommunicatorCorrectness.*/CE_RING_all_to_all:*/CommunicatorCorrectness.*/CE_RING_send_recv'
save
