# Session 20 call C: the rest of the correctness suites at the padding-free argument structs: the forced
# wire protocols, the push reduction, the copy-engine algorithms, 64 Mi elements per collective, the graph
# tests.
# The CLI travels compressed (the carry limit): unpacked before call-lib.sh runs it.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh c
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t proto 140 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/PROTO_*:*/CommunicatorCorrectness.*/PUSH_*'
save
t ce 200 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/CE_*'
save
t large 130 dist/tests/gpu_test_communicator --gtest_filter='EveryCollective/CommunicatorLarge.*'
save
t graph 110 dist/tests/gpu_test_coll_graph
save
