# Session 12 call D on nvidia-h200-x2: AUTO with LL128 from 32 KiB of LL lines per rank (16 KiB messages on
# two GPUs) against NCCL in the same run: all-reduce in 200-iteration graphs, every collective in 20-iteration
# ones; LL against LL128 around the line (4-64 KiB); the line-format tests at this code.
source scripts/device/call-lib.sh d
timeout 100 dist/peerlink coll -o all_reduce -b 8 -e 4M -f 2 -n 200 --json $p/coll-all_reduce-n200.json >$p/coll-all_reduce-n200.txt 2>&1; echo "ar n200: $?"
save
for c in all_gather reduce_scatter broadcast reduce all_to_all; do
  timeout 60 dist/peerlink coll -o $c -b 8 -e 4M -f 4 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c: $?"
done
save
for proto in LL LL128; do
  PEERLINK_PROTO=$proto timeout 40 dist/peerlink coll --no-nccl -o all_reduce -b 4K -e 64K -f 2 -n 200 --json $p/line-ar-$proto.json >$p/line-ar-$proto.txt 2>&1 || echo "line $proto failed"
done
python3 scripts/coll_graph_times.py $p/line-ar-*.json | tee $p/times-line-all_reduce.txt
t sanity 100 dist/tests/gpu_test_coll_ll128
t auto 150 dist/tests/gpu_test_communicator --gtest_filter='*AUTO_*'
save
for f in $p/coll-*.json; do python3 scripts/coll_compare.py $f | tail -n +3; done >$p/compare.md
save
grep -E "^ +[0-9]+ " $p/coll-all_reduce-n200.txt | tail -20 | cut -c1-90
