# Session 17 call B: the final code (the tail reverted; ring start/end step names; blockBarrier's halves
# shared) under every collective's correctness tests, the deadline and back-to-back tests and two graph
# tests; then the ring reduce's timeline over back-to-back calls (an experiment build, dist/xz's
# peerlink_ring_timeline, experiment-ring-timeline-calls.diff): where the calls' time goes at 32 and 128 MiB.
source scripts/device/call-lib.sh b
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
xz -dc dist/extra/peerlink_ring_timeline.xz > dist/peerlink_ring_timeline && chmod +x dist/peerlink_ring_timeline
for m in 32 128; do
  for ns in 1 0; do
    PEERLINK_COLL_RING_NEIGHBOR_START=$ns timeout 60 dist/peerlink_ring_timeline $m 12 > $p/timeline-${m}M-n$ns.txt 2>&1; echo "timeline ${m}M n$ns: $?"
  done
done
save
t deadline 60 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorDeadline.*'
grep -E "^(RING|ONESHOT|TWOSHOT)" $p/deadline.txt | cut -c1-200
t back-to-back 60 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorRing.*'
save
t comm 330 dist/tests/gpu_test_communicator
save
t graph 60 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorGraph.EveryCollectiveReplays:CommunicatorGraph.BackToBackCallsSeeThePreviousResult'
save
