# Session 10 call B (main 6a9c710, the machine of call A still warm): all-reduce and reduce-scatter from
# 32 MiB to 1 GiB with NCCL in the same run (their ring chains run the claiming kernel since session 9)
source scripts/device/call-lib.sh b
for c in all_reduce reduce_scatter; do
  timeout 150 dist/peerlink coll -o $c -b 32M -e 1G -f 2 --json $p/coll-$c.json > $p/coll-$c.txt 2>&1; echo "coll $c: $?"
  python3 scripts/coll_compare.py $p/coll-$c.json | tee $p/compare-$c.md
  save
done
