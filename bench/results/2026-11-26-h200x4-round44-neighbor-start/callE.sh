# Session 16 call E: only on H200s (the machine): every collective 8 B - 512 MiB, broadcast, reduce
# and all-reduce 32 MiB - 1 GiB against NCCL, and the small all-reduce in 200-iteration graphs; on any
# other card it stops at once (every call of the session so far came on 4x H100).
source scripts/device/call-lib.sh e
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
case "$gpu" in
  *H200*) ;;
  *) echo "not H200: nothing run"; exit 0 ;;
esac
for c in all_reduce all_gather all_to_all reduce_scatter broadcast reduce; do
  timeout 100 dist/peerlink coll -o $c -b 8 -e 512M -f 4 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c 8-512M: $?"
  save
done
for c in broadcast reduce all_reduce; do
  timeout 100 dist/peerlink coll -o $c -b 32M -e 1G -f 2 --json $p/large-$c.json >$p/large-$c.txt 2>&1; echo "$c 32M-1G: $?"
  save
done
timeout 100 dist/peerlink coll -o all_reduce -b 8 -e 64K -f 2 -n 200 --json $p/coll-all_reduce-n200.json >$p/coll-all_reduce-n200.txt 2>&1; echo "ar n200: $?"
save
