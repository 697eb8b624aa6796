# Session 20 call C: the rest of the correctness suites at the padding-free argument structs: the ring's
# last four (call B's 170 s ran out), the forced wire protocols, the push reduction, the copy-engine
# algorithms.
# The CLI travels compressed (the carry limit): unpacked before call-lib.sh runs it.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh c
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t ring-rest 60 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/RING_all_gather:*/CommunicatorCorrectness.*/RING_reduce_scatter:*/CommunicatorCorrectness.*/RING_all_to_all:*/CommunicatorCorrectness.*/RING_send_recv'
save
t proto 160 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/PROTO_*:*/CommunicatorCorrectness.*/PUSH_*'
save
t ce 200 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/CE_*'
save
