# Session 15 call D: the final code, every collective at 512 MiB against NCCL in the same run (the busbw
# targets), then all-reduce in 200-iteration graphs 8 B - 32 MiB (round 42's call D again).
source scripts/device/call-lib.sh d
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for c in all_reduce all_gather all_to_all reduce_scatter broadcast reduce; do
  timeout 60 dist/peerlink coll -o $c -b 512M -e 512M --json $p/coll-$c-512M.json >$p/coll-$c-512M.txt 2>&1; echo "$c 512M: $?"
done
save
timeout 150 dist/peerlink coll -o all_reduce -b 8 -e 32M -f 2 -n 200 --json $p/coll-all_reduce-n200.json >$p/coll-all_reduce-n200.txt 2>&1; echo "ar n200: $?"
save
