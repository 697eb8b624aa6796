# Session 13 call A on nvidia-h200-x4: the one-shot kernels polling up to four peers' lines at once
# (new, 97919b3) against the round-40 kernels (old, dist/peerlink-old = 29e327b) in the same run, 200-iteration
# graphs, LL and LL128 forced and AUTO; the sweep's warm-up (new) and the 8 B eager cell; AUTO against NCCL
# 8 B - 32 MiB; a block sweep of two-shot all-reduce at 4 - 32 MiB; the one-shot kernels' GPU tests.
source scripts/device/call-lib.sh a
old=dist/peerlink-old
dist/peerlink topo >$p/topo.txt 2>&1
for round in 1 2; do
  for bin in old new; do
    b=dist/peerlink; [ $bin = old ] && b=$old
    for proto in LL LL128; do
      PEERLINK_PROTO=$proto timeout 40 $b coll --no-nccl -o all_reduce -b 8 -e 256K -f 4 -n 200 --json $p/line-r$round-$proto-$bin.json >$p/line-r$round-$proto-$bin.txt 2>&1 || echo "$round $bin $proto failed"
    done
  done
done
python3 scripts/coll_graph_times.py $p/line-r*.json | tee $p/times-line.txt
save
t sanity 100 dist/tests/gpu_test_coll_ll128
t proto 240 dist/tests/gpu_test_communicator --gtest_filter='*PROTO_LL*:*AUTO*:*ONESHOT*:*Eager*:*RanksMayRunAhead*'
t errors 90 dist/tests/gpu_test_coll_errors
save
t shared 200 dist/tests/gpu_test_communicator_shared --gtest_filter='*AUTO*:*LL128*'
save
timeout 120 dist/peerlink coll -o all_reduce -b 8 -e 32M -f 2 -n 200 --json $p/coll-all_reduce-n200.json >$p/coll-all_reduce-n200.txt 2>&1; echo "ar n200: $?"
timeout 30 $old coll --no-nccl -o all_reduce -b 8 -e 64 -f 2 -n 200 --json $p/eager-old.json >$p/eager-old.txt 2>&1; echo "eager old: $?"
save
for c in all_gather reduce_scatter broadcast reduce all_to_all; do
  timeout 60 dist/peerlink coll -o $c -b 8 -e 4M -f 4 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c: $?"
done
for f in $p/coll-*.json; do python3 scripts/coll_compare.py $f | tail -n +3; done >$p/compare.md
save
for blocks in 0 96 64 48 32; do
  PEERLINK_COLL_MAX_BLOCKS=$blocks timeout 40 dist/peerlink coll --no-nccl -o all_reduce -b 4M -e 32M -f 2 -n 50 --json $p/blocks-$blocks.json >$p/blocks-$blocks.txt 2>&1 || echo "blocks $blocks failed"
done
python3 scripts/coll_graph_times.py $p/blocks-*.json | tee $p/times-blocks.txt
save
for proto in AUTO SIMPLE; do
  for c in all_reduce reduce; do
    PEERLINK_PROTO=$proto timeout 40 dist/peerlink coll --no-nccl -g 2 -o $c -b 256K -e 1M -f 2 -n 100 --json $p/g2-$c-$proto.json >$p/g2-$c-$proto.txt 2>&1 || echo "g2 $c $proto failed"
  done
done
python3 scripts/coll_graph_times.py $p/g2-*.json | tee $p/times-g2.txt
save
grep -E "^ +[0-9]+ " $p/coll-all_reduce-n200.txt | head -24 | cut -c1-100
