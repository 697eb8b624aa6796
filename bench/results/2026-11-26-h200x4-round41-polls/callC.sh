# Session 13 call C on nvidia-h200-x4: AUTO's new LL128 budgets (1.75 MiB of lines per rank; reduce to the
# LL scratch; all-reduce and reduce in LL128 at every size) -- the correctness tests under AUTO on 4 GPUs and
# 3/4/8 shared ranks, every collective against NCCL in the same run 8 B - 4 MiB (all-reduce in 200-iteration
# graphs to 32 MiB), 2 GPUs at 512 KiB - 1 MiB against PEERLINK_PROTO=SIMPLE, and 512 MiB busbw of every
# collective with NCCL.
source scripts/device/call-lib.sh c
t auto 200 dist/tests/gpu_test_communicator --gtest_filter='*AUTO*:*Eager*:*RanksMayRunAhead*'
t sanity 60 dist/tests/gpu_test_coll_ll128
save
t shared 150 dist/tests/gpu_test_communicator_shared --gtest_filter='*AUTO*'
save
timeout 120 dist/peerlink coll -o all_reduce -b 8 -e 32M -f 2 -n 200 --json $p/coll-all_reduce-n200.json >$p/coll-all_reduce-n200.txt 2>&1; echo "ar n200: $?"
save
for c in reduce broadcast all_gather reduce_scatter all_to_all; do
  timeout 90 dist/peerlink coll -o $c -b 8 -e 4M -f 2 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c: $?"
done
save
for proto in AUTO SIMPLE; do
  PEERLINK_PROTO=$proto timeout 40 dist/peerlink coll --no-nccl -g 2 -o all_reduce -b 512K -e 1M -f 2 -n 100 --json $p/g2-all_reduce-$proto.json >$p/g2-all_reduce-$proto.txt 2>&1 || echo "g2 $proto failed"
done
python3 scripts/coll_graph_times.py $p/g2-*.json | tee $p/times-g2.txt
save
for c in all_reduce all_gather reduce_scatter all_to_all broadcast reduce; do
  timeout 100 dist/peerlink coll -o $c -b 512M -e 512M --json $p/big-$c.json >$p/big-$c.txt 2>&1; echo "big $c: $?"
  save
done
for f in $p/coll-*.json $p/big-*.json; do python3 scripts/coll_compare.py $f; done >$p/compare.md
save
