# Session 6 call E: the 4-GPU table at 00fb340 (split all-reduce, ring broadcast and reduce): six collectives, 8 B - 512 MiB, with NCCL
export NCCL_NVLS_ENABLE=0
export PEERLINK_NCCL_LIBRARY=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))")
p=/tmp/e; mkdir -p $p
save() { tar czf $OUT/e.tar.gz -C /tmp e; }
for c in all_reduce all_gather reduce_scatter all_to_all broadcast reduce; do
  timeout 120 dist/peerlink coll -o $c -b 8 -e 512M -f 4 --json $p/coll-$c.json > $p/coll-$c.txt 2>&1; echo "$c: $?"
  save
done
python3 scripts/coll_chart.py $p/coll-ratio.svg $p/coll-*.json 2>&1 | grep -E "^\|" | head -40
save
