# Session 10 call G (main 4e14371, the code of call F): every algorithm x collective correctness test and
# the 64M-element ones (the rings, the push reduction, two-shot and LL kernels with the new counters and
# programmatic dependent launch), as far as the device time allows (a first try, call-g1, matched only the two-shot tests: the parameterized names start with their suite's prefix)
source scripts/device/call-lib.sh g
t correctness 400 dist/tests/gpu_test_communicator --gtest_filter='*CommunicatorCorrectness*:*CommunicatorLarge*'
grep -E "^\[ +(OK|FAILED) +\]" $p/correctness.txt | awk '{print $3, $4, $5}' | tr '\n' ' '; echo
save
