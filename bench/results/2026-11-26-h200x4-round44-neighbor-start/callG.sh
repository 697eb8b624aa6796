# Session 16 call G: the ring kernels now also wait, in block 0 before they end, for every rank's start
# (awaitEveryStart) and signal every rank at their start. The back-to-back test and its negative control
# rebuilt on this code (control-no-wait-2.diff), the deadline test, the rings' correctness tests (4 GPUs and
# shared), two graph tests; the neighbour start on and off again (forced ring), and broadcast and reduce
# 32 MiB - 1 GiB against NCCL.
source scripts/device/call-lib.sh g
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t back-to-back 60 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorRing.*'
t control-no-wait 60 dist/tests/gpu_test_communicator_nowait --gtest_filter='CommunicatorRing.*'
t deadline 60 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorDeadline.*'
grep -E "^RING|after the latch" $p/deadline.txt | tail -2 | cut -c1-300
save
t comm 100 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/RING_broadcast:*/CommunicatorCorrectness.*/RING_reduce:*/CommunicatorCorrectness.*/RING_all_reduce:*/CommunicatorCorrectness.*/RING_reduce_scatter'
t shared 60 dist/tests/gpu_test_communicator_shared --gtest_filter='Rings/*'
t graph 60 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorGraph.EveryCollectiveReplays:CommunicatorGraph.BackToBackCallsSeeThePreviousResult'
save
for n in 1 0; do
  for c in reduce broadcast; do
    PEERLINK_ALGO=RING PEERLINK_COLL_RING_NEIGHBOR_START=$n timeout 60 dist/peerlink coll -o $c -b 4M -e 1G -f 2 -n 10 -w 3 -c 0 --no-nccl --json $p/$c-n$n.json >$p/$c-n$n.txt 2>&1; echo "$c-n$n: $?"
  done
done
save
for c in reduce broadcast; do
  timeout 100 dist/peerlink coll -o $c -b 32M -e 1G -f 2 --json $p/large-$c.json >$p/large-$c.txt 2>&1; echo "$c 32M-1G: $?"
  save
done
