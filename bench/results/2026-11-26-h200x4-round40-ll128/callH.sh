# Session 12 call H on nvidia-h200-x4: LL's size limit counting LL128 lines (1 MiB of them per rank: up to
# 320 KiB messages on four GPUs), AUTO against NCCL in the same run from 64 KiB to 2 MiB, every collective.
source scripts/device/call-lib.sh h
for c in all_reduce all_gather reduce_scatter broadcast reduce all_to_all; do
  timeout 50 dist/peerlink coll -o $c -b 64K -e 2M -f 2 -n 100 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c: $?"
done
for f in $p/coll-*.json; do python3 scripts/coll_compare.py $f | tail -n +3; done | tee $p/compare.md
save
