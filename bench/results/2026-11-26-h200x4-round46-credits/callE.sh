# Session 18 call E (the final kernels; the flag area one phase smaller since cae650a): the AUTO correctness
# tests of every collective, the two-shot and LL128 reduce, the communicator's other tests and the bad-input
# tests, as far as the session's device time goes.
source scripts/device/call-lib.sh e
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t errors 30 dist/tests/gpu_test_coll_errors
save
t comm 170 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/AUTO_*:*/CommunicatorCorrectness.*/TWOSHOT_reduce:*/CommunicatorCorrectness.*/PROTO_LL128_reduce:Communicator.*'
grep -E "^\[ +(OK|FAILED) +\]" $p/comm.txt | cut -c1-120
save
