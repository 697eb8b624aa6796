# Session 17 call A: ring chains end in a tail of smaller chunks (PEERLINK_COLL_RING_TAIL, default 2 in this
# build). Correctness first (deadline with the new step names, back-to-back, the rings on 4 GPUs and shared,
# two graph tests, reduce/broadcast rings with 3 tiers), then forced ring reduce and broadcast with 0-3 tiers
# (peerlink alone), the ring reduce-scatter and the copy-engine ring all-reduce with 0 and 2, and the reduce
# 8 MiB - 1 GiB against NCCL.
source scripts/device/call-lib.sh a
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t deadline 60 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorDeadline.*'
grep -E "^(RING|ONESHOT|TWOSHOT)" $p/deadline.txt | cut -c1-260
t back-to-back 60 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorRing.*'
save
t comm 120 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/RING_broadcast:*/CommunicatorCorrectness.*/RING_reduce:*/CommunicatorCorrectness.*/RING_all_reduce:*/CommunicatorCorrectness.*/RING_reduce_scatter:*/CommunicatorCorrectness.*/CE_RING_all_reduce'
PEERLINK_COLL_RING_TAIL=3 t comm-tail3 100 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/RING_broadcast:*/CommunicatorCorrectness.*/RING_reduce'
t shared 60 dist/tests/gpu_test_communicator_shared --gtest_filter='Rings/*'
t graph 60 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorGraph.EveryCollectiveReplays:CommunicatorGraph.BackToBackCallsSeeThePreviousResult'
save
for c in reduce broadcast; do
  for k in 0 1 2 3; do
    PEERLINK_ALGO=RING PEERLINK_COLL_RING_TAIL=$k timeout 60 dist/peerlink coll -o $c -b 8M -e 1G -f 2 -n 10 -w 3 -c 0 --no-nccl --json $p/$c-t$k.json >$p/$c-t$k.txt 2>&1; echo "$c-t$k: $?"
  done
  save
done
for c in reduce_scatter all_reduce; do
  for k in 0 2; do
    PEERLINK_COLL_RING_TAIL=$k timeout 60 dist/peerlink coll -o $c -b 32M -e 1G -f 2 -n 10 -w 3 -c 0 --no-nccl --json $p/$c-t$k.json >$p/$c-t$k.txt 2>&1; echo "$c-t$k: $?"
  done
  save
done
timeout 120 dist/peerlink coll -o reduce -b 8M -e 1G -f 2 --json $p/large-reduce.json >$p/large-reduce.txt 2>&1; echo "reduce 8M-1G: $?"
save
