# Session 27 call E (4x H200, the machine of calls B-D): how fast SM stores and the copy engines push out of a
# GPU to all of its peers on H200 (peerlink_push_fanout, 8 and 16 MiB to each peer: the 32 MiB all-reduce's
# phase and the whole of it), and the ring broadcast at 512 MiB under other chunks and grids (peerlink alone,
# 20-iteration cells, alternating with the default) to see whether H200's level with NCCL moves.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh e
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for mib in 8 16; do
  timeout 90 dist/peerlink_push_fanout 21 $mib 0 50 >$p/fanout-$mib.txt 2>&1
  echo "fanout $mib MiB: $?"; cat $p/fanout-$mib.txt
done
save
cell() { awk '/peerlink_graph/{f=1} f && /^ +[0-9]+ /{printf "%s:%s/%s busbw %s#%s ", $1, $6, $10, $8, $9+$13}' "$1"; }
for i in 1 2; do
  for setting in default chunk=16384 chunk=65536 blocks=66 blocks=96; do
    env=(); case $setting in chunk=*) env=(PEERLINK_COLL_RING_CHUNK=${setting#chunk=});; blocks=*) env=(PEERLINK_COLL_MAX_BLOCKS=${setting#blocks=});; esac
    env "${env[@]}" timeout 60 dist/peerlink coll -o broadcast -b 512M -e 512M -n 20 --no-nccl --json $p/bcast-$setting-$i.json >$p/bcast-$setting-$i.txt 2>&1
    echo "broadcast 512M $setting $i: $? $(cell $p/bcast-$setting-$i.txt)"
  done
  save
done
