# Session 12 call A on nvidia-h200-x2 (x4 withheld this session): the first run of the LL128 kernel and of
# the eager same-arguments skip; LL against LL128 (and SIMPLE) timed on 2 GPUs, peerlink alone, the same
# binary; then AUTO against NCCL in the same run; the shared-rank tests (3/4/8 ranks on 2 GPUs) with LL128.
source scripts/device/call-lib.sh a
nvidia-smi topo -m >$p/nvidia-smi-topo.txt 2>&1
dist/peerlink topo >$p/topo.txt 2>&1
t ll128 120 dist/tests/gpu_test_coll_ll128
t eager 60 dist/tests/gpu_test_communicator --gtest_filter='*EagerCallsWithRepeatedArgumentsEachRun*'
t proto128 200 dist/tests/gpu_test_communicator --gtest_filter='*PROTO_LL128*'
save
for proto in LL LL128 SIMPLE; do
  PEERLINK_PROTO=$proto timeout 60 dist/peerlink coll --no-nccl -o all_reduce -b 8 -e 1M -f 2 -n 200 --json $p/ar-$proto.json >$p/ar-$proto.txt 2>&1; echo "ar $proto: $?"
done
for c in all_gather reduce_scatter broadcast reduce all_to_all; do
  for proto in LL LL128; do
    PEERLINK_PROTO=$proto timeout 40 dist/peerlink coll --no-nccl -o $c -b 1K -e 1M -f 4 -n 100 --json $p/$c-$proto.json >$p/$c-$proto.txt 2>&1; echo "$c $proto: $?"
  done
done
save
python3 scripts/coll_compare.py $p/ar-LL.json $p/ar-LL128.json $p/ar-SIMPLE.json >$p/compare-all_reduce.md
for c in all_gather reduce_scatter broadcast reduce all_to_all; do
  python3 scripts/coll_compare.py $p/$c-LL.json $p/$c-LL128.json >$p/compare-$c.md
done
cat $p/compare-*.md
timeout 90 dist/peerlink coll -o all_reduce -b 8 -e 4M -f 2 -n 200 --json $p/ar-auto-nccl.json >$p/ar-auto-nccl.txt 2>&1; echo "ar auto nccl: $?"
save
t shared128 150 dist/tests/gpu_test_communicator_shared --gtest_filter='*LL128*'
save
tail -25 $p/ar-auto-nccl.txt
