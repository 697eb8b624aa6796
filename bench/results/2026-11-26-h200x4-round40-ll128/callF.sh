# Session 12 call F on nvidia-h200-x4 (lent late in the session), the binary of calls D-E (f54584a): the
# leaner LL and LL128 kernels and AUTO's LL128 line (32 KiB of LL lines per rank: 5.4 KiB messages on four
# GPUs, not measured there before) against NCCL in the same run; LL against LL128 around the line; the
# LL128 stress test and the AUTO / LL / LL128 correctness tests on four GPUs.
source scripts/device/call-lib.sh f
dist/peerlink topo >$p/topo.txt 2>&1
timeout 100 dist/peerlink coll -o all_reduce -b 8 -e 4M -f 2 -n 200 --json $p/coll-all_reduce-n200.json >$p/coll-all_reduce-n200.txt 2>&1; echo "ar n200: $?"
save
for proto in LL LL128; do
  PEERLINK_PROTO=$proto timeout 40 dist/peerlink coll --no-nccl -o all_reduce -b 1K -e 256K -f 2 -n 200 --json $p/line-ar-$proto.json >$p/line-ar-$proto.txt 2>&1 || echo "line $proto failed"
done
python3 scripts/coll_graph_times.py $p/line-ar-*.json | tee $p/times-line-all_reduce.txt
save
t sanity 100 dist/tests/gpu_test_coll_ll128
t correctness 200 dist/tests/gpu_test_communicator --gtest_filter='*AUTO_*:*PROTO_LL128_*:*PROTO_LL_all_reduce*:*Eager*'
save
for c in all_gather reduce_scatter broadcast reduce all_to_all; do
  timeout 60 dist/peerlink coll -o $c -b 8 -e 4M -f 4 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c: $?"
done
for f in $p/coll-*.json; do python3 scripts/coll_compare.py $f | tail -n +3; done >$p/compare.md
save
python3 scripts/coll_compare.py $p/coll-all_reduce-n200.json | tee $p/compare-all_reduce-n200.md
