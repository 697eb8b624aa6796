# Session 17 call E: the ring reduce kernels hand the stage over across calls (a sender waits for the next
# rank to release its stage from the previous ring reduce, not for its next kernel to start; round 45's
# timeline showed each rank idle 15-22 us per call at the start wait). The back-to-back test, the reduce
# 8 MiB - 1 GiB against NCCL and the ring reduce-scatter and all-reduce (forced) alone, then the rings'
# correctness tests (4 GPUs and shared), the deadline test and two graph tests.
source scripts/device/call-lib.sh e
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t back-to-back 60 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorRing.*'
save
timeout 100 dist/peerlink coll -o reduce -b 8M -e 1G -f 2 --json $p/large-reduce.json >$p/large-reduce.txt 2>&1; echo "reduce 8M-1G: $?"
save
for c in reduce_scatter all_reduce; do
  PEERLINK_ALGO=RING timeout 40 dist/peerlink coll -o $c -b 32M -e 1G -f 2 -n 10 -w 3 -c 0 --no-nccl --json $p/$c-ring.json >$p/$c-ring.txt 2>&1; echo "$c ring: $?"
done
save
t comm 100 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/RING_reduce:*/CommunicatorCorrectness.*/RING_all_reduce:*/CommunicatorCorrectness.*/RING_reduce_scatter:*/CommunicatorCorrectness.*/CE_RING_all_reduce'
save
t shared 40 dist/tests/gpu_test_communicator_shared --gtest_filter='Rings/*'
t deadline 30 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorDeadline.*'
grep -E "^RING" $p/deadline.txt | cut -c1-300
save
t graph 45 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorGraph.EveryCollectiveReplays:CommunicatorGraph.BackToBackCallsSeeThePreviousResult'
save
