# Session 9 call M (main): what a fresh process pays for CUDA contexts and NCCL's ncclCommInitAll beside
# peerlink's creation test; the relay tests and RELAY against the copy engine with planRelayShares (0821d3d);
# peerlink_tune's both-ways-by-SMs sweep
source scripts/device/call-lib.sh m
nvidia-smi -q | grep -i -E "persistence|addressing mode" | sort | uniq -c > $p/persistence.txt
REPEAT=2 timeout 120 python3 scripts/device/context-timing.py > $p/context-timing.txt 2>&1; echo "context timing: $?"; tail -5 $p/context-timing.txt
t creation 60 dist/tests/gpu_test_communicator --gtest_filter='Communicator.CreatesOnEveryGpu*'
grep "created in" $p/creation.txt
save
t relay 200 dist/tests/gpu_test_gpu_transport --gtest_filter='*Relay*'
save
timeout 120 dist/peerlink bench -t d2d_write_ce -t d2d_relay_split -t d2d_relay -b 16M -e 1G -f 4 --json $p/relay.json > $p/relay.txt 2>&1; echo "relay bench: $?"
save
timeout 240 dist/peerlink_tune 0 1 2 > $p/tune.txt 2>&1; echo "tune: $?"
save
