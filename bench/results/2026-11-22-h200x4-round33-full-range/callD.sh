# Session 7 call D: the 4-GPU table at 10a888e (six collectives 8 B - 512 MiB x4, with NCCL), then all-reduce,
# broadcast and reduce 64 MiB - 1 GiB x2 with NCCL
export NCCL_NVLS_ENABLE=0
export PEERLINK_NCCL_LIBRARY=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))")
p=/tmp/d; mkdir -p $p
save() { tar czf $OUT/d.tar.gz -C /tmp d; }
COLL_TESTS=0 OUT=$p bash scripts/device/run-coll.sh
save
for o in all_reduce reduce broadcast; do
  timeout 110 dist/peerlink coll -o $o -b 64M -e 1G -f 2 --json $p/large-$o.json > $p/large-$o.txt 2>&1; echo "large $o: $?"
  python3 scripts/coll_compare.py $p/large-$o.json 2>&1 | grep -E "^\|"
  save
done
