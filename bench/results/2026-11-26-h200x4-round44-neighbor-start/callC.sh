# Session 16 call C: the final code's other tables: all-reduce, all-gather, all-to-all 8 B - 512 MiB (x4)
# and all-reduce 32 MiB - 1 GiB against NCCL; the reduce chain on 24 and 32 blocks (forced ring, peerlink
# alone); on H200s also broadcast, reduce and reduce-scatter (call B's runs) so the machine has every table.
source scripts/device/call-lib.sh c
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
for c in all_reduce all_gather all_to_all; do
  timeout 150 dist/peerlink coll -o $c -b 8 -e 512M -f 4 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c 8-512M: $?"
  save
done
timeout 150 dist/peerlink coll -o all_reduce -b 32M -e 1G -f 2 --json $p/large-all_reduce.json >$p/large-all_reduce.txt 2>&1; echo "all_reduce 32M-1G: $?"
save
for b in 24 0; do
  PEERLINK_ALGO=RING PEERLINK_COLL_RING_REDUCE_BLOCKS=$b timeout 60 dist/peerlink coll -o reduce -b 16M -e 256M -f 2 -n 10 -w 3 -c 0 --no-nccl --json $p/rd-b$b.json >$p/rd-b$b.txt 2>&1; echo "rd-b$b: $?"
done
save
case "$gpu" in
  *H200*)
    for c in broadcast reduce reduce_scatter; do
      timeout 150 dist/peerlink coll -o $c -b 8 -e 512M -f 4 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c 8-512M: $?"
      save
    done
    for c in broadcast reduce; do
      timeout 150 dist/peerlink coll -o $c -b 32M -e 1G -f 2 --json $p/large-$c.json >$p/large-$c.txt 2>&1; echo "$c 32M-1G: $?"
      save
    done
    ;;
esac
