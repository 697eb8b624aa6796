# Session 19 call C: the launch threads kept awake (PEERLINK_COLL_LAUNCH_THREADS=10000000, so every eager set
# takes them) under the tests call B's limit cut short or left out: the copy-engine collectives (their events
# and copies now put on the streams by the threads), the 64 Mi-element collectives, the graph file's
# back-to-back and deadline tests, LL128's back-to-back calls; the deadline test again at the default.
source scripts/device/call-lib.sh c
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t deadline-default 40 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorDeadline.*'
save
export PEERLINK_COLL_LAUNCH_THREADS=10000000
t graph 90 dist/tests/gpu_test_coll_graph --gtest_filter='-CommunicatorGraph.AllReduceReplaysSmallAndLarge:CommunicatorGraph.EveryCollectiveReplays:CommunicatorGraph.CopyEngineCollectivesReplay'
save
t ll128 60 dist/tests/gpu_test_coll_ll128
save
t ce 150 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/CE_*'
save
t large 200 dist/tests/gpu_test_communicator --gtest_filter='EveryCollective/CommunicatorLarge.*'
save
