# Session 24 call G: the final code (the trace hooks in the broadcast and direct-read kernels since call D).
# The pace test, the correctness cases under AUTO, ONESHOT, TWOSHOT and RING, the split two-shot and two-shot
# reduce suites, the ring suites and the 64 Mi-element ones, the graph and deadline tests, the coll harness,
# bad input.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh g
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
t pace 60 dist/tests/gpu_test_coll_ring_pace
t errors 120 dist/tests/gpu_test_coll_errors
t correct 330 dist/tests/gpu_test_communicator \
  --gtest_filter='*AUTO*:*ONESHOT*:*TWOSHOT*:*RING*:CommunicatorSplitTwoShot.*:CommunicatorTwoShotReduce.*:CommunicatorRing.*:EveryCollective/CommunicatorLarge.*-*CE_RING*'
save
t graph 150 dist/tests/gpu_test_coll_graph
save
