# Session 11 call A on nvidia-h200-x2 (x4 not lent at the time): the first run of the LL128 kernel and of
# the eager same-arguments skip; LL against LL128 timed on 2 GPUs (peerlink alone, the same binary).
source scripts/device/call-lib.sh a
t ll128 120 dist/tests/gpu_test_coll_ll128
save
t eager 60 dist/tests/gpu_test_communicator --gtest_filter='*EagerCallsWithRepeatedArgumentsEachRun*'
save
t proto128 300 dist/tests/gpu_test_communicator --gtest_filter='*PROTO_LL128*'
save
for proto in LL LL128; do
  PEERLINK_PROTO=$proto timeout 60 dist/peerlink coll --no-nccl -o all_reduce -b 8 -e 1M -f 2 -n 200 --json $p/ar-$proto.json > $p/ar-$proto.txt 2>&1; echo "ar $proto: $?"
  for c in all_gather reduce_scatter broadcast; do
    PEERLINK_PROTO=$proto timeout 60 dist/peerlink coll --no-nccl -o $c -b 8 -e 1M -f 4 --json $p/$c-$proto.json > $p/$c-$proto.txt 2>&1; echo "$c $proto: $?"
  done
  save
done
python3 scripts/coll_graph_times.py $p/*.json
