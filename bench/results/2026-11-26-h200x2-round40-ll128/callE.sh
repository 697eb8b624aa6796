# Session 12 call E on nvidia-h200-x2, the binary of call D: the tests of the kernels that the shared
# reduction (PackReducer under reducePack) and the out-of-line payload paths (ll_line.cuh) touched but
# calls C-D did not run: two-shot, ring, push, the 64M-element ones, shared-rank rings and two-shot, and
# the put-with-signal LL lines; the LL put latency.
source scripts/device/call-lib.sh e
t ll 60 dist/tests/gpu_test_gpu_ll
t signal 60 dist/tests/gpu_test_gpu_signal_channel
t communicator 300 dist/tests/gpu_test_communicator --gtest_filter='*TWOSHOT*:*RING*:*PUSH*:*Large*:*SplitTwoShot*:*TwoShotReduce*:*PROTO_SIMPLE*'
save
t shared 150 dist/tests/gpu_test_communicator_shared --gtest_filter='*3ranks_TWOSHOT*:*3ranks_PUSH*:*Rings*'
save
timeout 60 dist/peerlink bench -t latency_put_ll --json $p/latency_put_ll.json >$p/latency_put_ll.txt 2>&1; echo "latency: $?"
save
head -12 $p/latency_put_ll.txt
