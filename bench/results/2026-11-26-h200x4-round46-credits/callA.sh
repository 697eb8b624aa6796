# Session 18 call A: the committed build (the stage hand-over in the reduce's single chain; writeEveryCopy)
# on a GPU for the first time -- back-to-back, the deadline test with the new ring reduce cases ("ring end",
# "ring stage"), the rings' correctness (4 GPUs and shared), two graph tests -- and, in one run, the forced
# ring all-reduce and reduce-scatter with the hand-over in every chain (experiment-handover-every-chain.diff,
# dist/peerlink-x) against the committed start wait (dist/peerlink), alternated twice.
source scripts/device/call-lib.sh a
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
xz -dc dist/extra/peerlink-x.xz >dist/peerlink-x && chmod +x dist/peerlink-x
t back-to-back 60 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorRing.*'
t deadline 40 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorDeadline.*'
grep -E "^(RING|ONESHOT|TWOSHOT)" $p/deadline.txt | cut -c1-400
save
for round in 1 2; do
  for bin in peerlink peerlink-x; do
    for c in all_reduce reduce_scatter; do
      PEERLINK_ALGO=RING timeout 40 dist/$bin coll -o $c -b 128M -e 1G -f 2 -n 10 -w 3 -c 0 --no-nccl --json $p/$c-$bin-$round.json >$p/$c-$bin-$round.txt 2>&1; echo "$c $bin $round: $?"
    done
  done
  save
done
t comm 100 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/RING_reduce:*/CommunicatorCorrectness.*/RING_all_reduce:*/CommunicatorCorrectness.*/RING_reduce_scatter:*/CommunicatorCorrectness.*/CE_RING_all_reduce'
save
t shared 40 dist/tests/gpu_test_communicator_shared --gtest_filter='Rings/*'
t graph 45 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorGraph.EveryCollectiveReplays:CommunicatorGraph.BackToBackCallsSeeThePreviousResult'
save
