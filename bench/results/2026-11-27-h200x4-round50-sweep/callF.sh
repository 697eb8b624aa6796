# Session 22 call F, sent on call E's warm machine with its dist/: the all-reduce at 512 MiB in four fresh
# processes (peerlink alone, 20 and 50 iterations) for its spread across runs; on H200s also the ring
# reduce's grid and chunk at 256 MiB - 1 GiB (peerlink alone, forced ring), whose rate was ~1% under NCCL's
# there (calls B, D).
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh f
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
for i in 1 2 3 4; do
  timeout 40 dist/peerlink coll -o all_reduce -b 512M -e 512M -n $((i <= 2 ? 20 : 50)) --no-nccl --json $p/ar512-$i.json \
    >$p/ar512-$i.txt 2>&1
  echo "ar512 $i: $?"
done
save
case "$gpu" in *H200*) ;; *) exit 0 ;; esac
sweep() {  # sweep NAME ENV...
  local name=$1
  shift
  env PEERLINK_ALGO=RING "$@" timeout 60 dist/peerlink coll -o reduce -b 256M -e 1G -f 2 -n 10 -w 3 -c 0 --no-nccl \
    --json $p/$name.json >$p/$name.txt 2>&1
  echo "$name: $?"
}
sweep rd-default
sweep rd-b24 PEERLINK_COLL_RING_REDUCE_BLOCKS=24
sweep rd-b40 PEERLINK_COLL_RING_REDUCE_BLOCKS=40
sweep rd-b48 PEERLINK_COLL_RING_REDUCE_BLOCKS=48
sweep rd-b32-c128k PEERLINK_COLL_RING_REDUCE_BLOCKS=32 PEERLINK_COLL_RING_CHUNK=131072
sweep rd-b16-c128k PEERLINK_COLL_RING_REDUCE_BLOCKS=16 PEERLINK_COLL_RING_CHUNK=131072
sweep rd-default-2
save
