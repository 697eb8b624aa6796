# Session 8 call K (main 4423236: pass-through RELAY kernels on an eighth / a quarter of the relay GPU's
# SMs): the relay GPU tests, then peerlink bench DIRECT copy engine, one relay and the split, 16 MiB - 1 GiB
source scripts/device/call-lib.sh k
t relay-tests 120 dist/tests/gpu_test_gpu_transport --gtest_color=no --gtest_filter='*Relay*'
save
timeout 150 dist/peerlink bench -t d2d_write_ce -t d2d_relay -t d2d_relay_split -b 16M -e 1G -f 4 --json $p/relay.json > $p/relay.txt 2>&1; echo "bench: $?"
save
