# Session 13 call B on nvidia-h200-x4, the binary of call A (4ea7fcc): communicator creation in a fresh
# process; with the batched polls, where LL128 one-shot stands against AUTO's two-shot/direct kernels past
# LL's wire budget (256 KiB - 1 MiB, every collective, forced PEERLINK_PROTO=LL128 against AUTO, twice); LL
# against LL128 below AUTO's line (8 B - 16 KiB, every collective; all-reduce also on 2 GPUs).
source scripts/device/call-lib.sh b
t creation 60 dist/tests/gpu_test_communicator --gtest_filter='*CreatesOnEveryGpu*'
grep -i "creat\|ms" $p/creation.txt | head -5
for round in 1 2; do
  for proto in AUTO LL128; do
    for c in all_reduce all_gather reduce_scatter broadcast reduce all_to_all; do
      PEERLINK_PROTO=$proto timeout 40 dist/peerlink coll --no-nccl -o $c -b 256K -e 1M -f 2 -n 100 --json $p/big-r$round-$c-$proto.json >$p/big-r$round-$c-$proto.txt 2>&1 || echo "big $round $c $proto failed"
    done
  done
done
for c in all_reduce all_gather reduce_scatter broadcast reduce all_to_all; do python3 scripts/coll_graph_times.py $p/big-r*-$c-*.json; done | tee $p/times-big.txt
save
for proto in LL LL128; do
  for c in all_reduce all_gather reduce_scatter broadcast reduce all_to_all; do
    PEERLINK_PROTO=$proto timeout 40 dist/peerlink coll --no-nccl -o $c -b 8 -e 16K -f 8 -n 200 --json $p/small-$c-$proto.json >$p/small-$c-$proto.txt 2>&1 || echo "small $c $proto failed"
  done
  PEERLINK_PROTO=$proto timeout 40 dist/peerlink coll --no-nccl -g 2 -o all_reduce -b 8 -e 64K -f 8 -n 200 --json $p/small-g2-all_reduce-$proto.json >$p/small-g2-all_reduce-$proto.txt 2>&1 || echo "small g2 $proto failed"
done
for c in all_reduce all_gather reduce_scatter broadcast reduce all_to_all g2-all_reduce; do python3 scripts/coll_graph_times.py $p/small-$c-*.json; done | tee $p/times-small.txt
save
