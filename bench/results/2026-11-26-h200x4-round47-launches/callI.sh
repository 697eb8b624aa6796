# Session 19 call I: the final launch-thread code (b96398d: the waking state, one take-back deadline) under
# the broad tests, threads kept awake (10 s) so every eager set takes them: the AUTO correctness tests of
# every collective and Communicator.*, the graph file but its copy-engine test, the 12 shared-GPU ring tests,
# the bad-input tests; the deadline tests at the default setting first.
source scripts/device/call-lib.sh i
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t deadline-default 40 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorDeadline.*'
save
export PEERLINK_COLL_LAUNCH_THREADS=10000000
t comm 170 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/AUTO_*:Communicator.*'
save
t graph 90 dist/tests/gpu_test_coll_graph --gtest_filter='-CommunicatorGraph.CopyEngineCollectivesReplay'
t shared 40 dist/tests/gpu_test_communicator_shared --gtest_filter='Rings/*'
t errors 30 dist/tests/gpu_test_coll_errors
save
