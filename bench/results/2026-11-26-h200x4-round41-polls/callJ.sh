# Session 13 call J on nvidia-h200-x4 (calls C-I came on 4x H100): the final binary (6b619ec), AUTO against
# NCCL in the same run -- all-reduce in 200-iteration graphs 8 B - 32 MiB, the other collectives 8 B - 4 MiB.
source scripts/device/call-lib.sh j
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
timeout 120 dist/peerlink coll -o all_reduce -b 8 -e 32M -f 2 -n 200 --json $p/coll-all_reduce-n200.json >$p/coll-all_reduce-n200.txt 2>&1; echo "ar n200: $?"
save
for c in reduce broadcast all_gather reduce_scatter all_to_all; do
  timeout 90 dist/peerlink coll -o $c -b 8 -e 4M -f 2 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c: $?"
done
for f in $p/coll-*.json; do python3 scripts/coll_compare.py $f; done >$p/compare.md
save
