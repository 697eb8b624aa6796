# Session 15 call C: ring chunks in whole 128-byte lines (call B's 256 MiB broadcast ran in 31776-byte chunks).
# The ring tests again; broadcast 32 MiB - 1 GiB against NCCL; then the other collectives' tables at this
# commit: all-reduce, all-gather, all-to-all 8 B - 512 MiB (x4) against NCCL, all-reduce 32 MiB - 1 GiB,
# and the small all-reduce in 200-iteration graphs.
source scripts/device/call-lib.sh c
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t comm 120 dist/tests/gpu_test_communicator --gtest_filter='*RING_broadcast:*RING_reduce_scatter:*RING_all_reduce:*RING_reduce'
save
timeout 150 dist/peerlink coll -o broadcast -b 32M -e 1G -f 2 --json $p/large-broadcast.json >$p/large-broadcast.txt 2>&1; echo "broadcast 32M-1G: $?"
save
for c in all_reduce all_gather all_to_all; do
  timeout 150 dist/peerlink coll -o $c -b 8 -e 512M -f 4 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c 8-512M: $?"
  save
done
timeout 150 dist/peerlink coll -o all_reduce -b 32M -e 1G -f 2 --json $p/large-all_reduce.json >$p/large-all_reduce.txt 2>&1; echo "all_reduce 32M-1G: $?"
save
timeout 100 dist/peerlink coll -o all_reduce -b 8 -e 32M -f 2 -n 200 --json $p/coll-all_reduce-n200.json >$p/coll-all_reduce-n200.txt 2>&1; echo "ar n200: $?"
save
