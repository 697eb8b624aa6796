# Session 20 call D: what call C's 160 s left of the forced protocols and the push reduction, 64 Mi elements
# per collective and the graph tests, at the padding-free argument structs.
# The CLI travels compressed (the carry limit): unpacked before call-lib.sh runs it.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh d
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t proto-rest 180 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/PROTO_SIMPLE_*:*/CommunicatorCorrectness.*/PUSH_*:-*/CommunicatorCorrectness.*/PROTO_SIMPLE_all_reduce:*/CommunicatorCorrectness.*/PROTO_SIMPLE_broadcast'
save
t large 130 dist/tests/gpu_test_communicator --gtest_filter='EveryCollective/CommunicatorLarge.*'
save
t graph 110 dist/tests/gpu_test_coll_graph
save
