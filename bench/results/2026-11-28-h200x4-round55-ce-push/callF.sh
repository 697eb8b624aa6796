# Session 27 call F (4x H200, the machine of calls B-E): the ring broadcast from 64 MiB to 1 GiB in its default
# chunks (up to 32 KiB a round per block) against 64 and 128 KiB (PEERLINK_COLL_RING_CHUNK), alternating,
# peerlink alone in 20-iteration graph cells: call E saw 64 KiB 0.2% faster at 512 MiB.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh f
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
cell() { awk '/peerlink_graph/{f=1} f && /^ +[0-9]+ /{printf "%s:%s/%s ", $1, $6, $10}' "$1"; }
for i in 1 2 3; do
  for setting in default 65536 131072; do
    env=(); [ $setting = default ] || env=(PEERLINK_COLL_RING_CHUNK=$setting)
    env "${env[@]}" timeout 90 dist/peerlink coll -o broadcast -b 64M -e 1G -n 20 --no-nccl --json $p/bcast-$setting-$i.json >$p/bcast-$setting-$i.txt 2>&1
    echo "broadcast $setting $i: $? $(cell $p/bcast-$setting-$i.txt)"
  done
  save
done
