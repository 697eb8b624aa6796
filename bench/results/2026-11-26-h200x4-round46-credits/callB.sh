# Session 18 call B: credits across calls for the ring reduce's single chain (a sender refills a slot of the
# next rank's stage once that rank has read the previous call's last round on it; cae650a). Correctness
# first (back-to-back, the deadline cases, the rings' correctness on 4 GPUs and shared, two graph tests),
# then the forced ring reduce against call A's build (dist/peerlink-old, the whole-stage hand-over),
# alternated twice; the reduce against NCCL; and the credits in every chain (experiment-credits-every-chain.diff,
# dist/peerlink-x2) against this build for the ring reduce-scatter and all-reduce.
source scripts/device/call-lib.sh b
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for x in peerlink-old peerlink-x2; do xz -dc dist/extra/$x.xz >dist/$x && chmod +x dist/$x; done
t back-to-back 60 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorRing.*'
t deadline 40 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorDeadline.*'
grep -E "^(RING|ONESHOT|TWOSHOT)" $p/deadline.txt | cut -c1-300
save
for round in 1 2; do
  for bin in peerlink-old peerlink; do
    PEERLINK_ALGO=RING timeout 40 dist/$bin coll -o reduce -b 32M -e 1G -f 2 -n 10 -w 3 -c 0 --no-nccl --json $p/reduce-$bin-$round.json >$p/reduce-$bin-$round.txt 2>&1; echo "reduce $bin $round: $?"
  done
done
save
timeout 90 dist/peerlink coll -o reduce -b 16M -e 512M -f 2 --json $p/reduce-nccl.json >$p/reduce-nccl.txt 2>&1; echo "reduce vs NCCL: $?"
save
for bin in peerlink peerlink-x2; do
  for c in reduce_scatter all_reduce; do
    PEERLINK_ALGO=RING timeout 40 dist/$bin coll -o $c -b 128M -e 1G -f 2 -n 10 -w 3 -c 0 --no-nccl --json $p/$c-$bin.json >$p/$c-$bin.txt 2>&1; echo "$c $bin: $?"
  done
done
save
t comm 100 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/RING_reduce:*/CommunicatorCorrectness.*/RING_all_reduce:*/CommunicatorCorrectness.*/RING_reduce_scatter:*/CommunicatorCorrectness.*/CE_RING_all_reduce'
save
t shared 40 dist/tests/gpu_test_communicator_shared --gtest_filter='Rings/*'
t graph 45 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorGraph.EveryCollectiveReplays:CommunicatorGraph.BackToBackCallsSeeThePreviousResult'
save
