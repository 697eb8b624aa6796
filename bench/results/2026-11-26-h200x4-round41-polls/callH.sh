# Session 13 call H on nvidia-h200-x4 (whichever 4-GPU machine comes), commit 5150d38's binary: why LL128's
# copies (all-gather, all-to-all) took 0.3-0.5 us longer than LL's at small sizes (call B) when its
# reductions did not -- LL against LL128 lines on 1, 2 and 4 GPUs (1: the kernel's own path, no peer),
# 200-iteration graphs, peerlink alone.
source scripts/device/call-lib.sh h
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for g in 1 2 4; do
  for c in all_gather all_to_all all_reduce broadcast; do
    for proto in LL LL128; do
      PEERLINK_PROTO=$proto timeout 30 dist/peerlink coll --no-nccl -g $g -o $c -b 256 -e 16K -f 8 -n 200 --json $p/g$g-$c-$proto.json >$p/g$g-$c-$proto.txt 2>&1 || echo "g$g $c $proto failed"
    done
  done
done
python3 scripts/coll_graph_times.py $p/g*.json | tee $p/times.txt
save
