# Session 24 call C: the all-reduce at 512 MiB with its chains keeping pace or not, on fresh buffers per cell
# (peerlink_ring_trace op=all_reduce, alternated); the reduce-scatter and all-reduce at 512 MiB in fresh
# processes with every eager iteration timed (pacing on). On H200 also send/recv and the reduce against NCCL.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
[ -e dist/peerlink_ring_trace ] || { xz -dc dist/extra/peerlink_ring_trace.xz >dist/peerlink_ring_trace && chmod +x dist/peerlink_ring_trace; }
source scripts/device/call-lib.sh c
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
for i in 1 2; do
  for pace in 1 0; do
    PEERLINK_COLL_RING_PACE=$pace timeout 90 dist/peerlink_ring_trace op=all_reduce cells=12 realloc=1 json=$p/ar-trace-pace$pace-$i.json >$p/ar-trace-pace$pace-$i.txt 2>&1
    echo "ar trace pace=$pace $i: $? $(grep '^cell' $p/ar-trace-pace$pace-$i.txt | sed 's/.*busbw \([0-9.]*\).*/\1/' | tr '\n' ' ')"
  done
done
save
for i in 1 2 3; do
  for o in reduce_scatter all_reduce; do
    timeout 60 dist/peerlink coll -o $o -b 512M -e 512M -n 50 --iteration-times --no-nccl --json $p/$o-it-$i.json >$p/$o-it-$i.txt 2>&1
    echo "$o $i: $? $(grep -E '^ +536870912' $p/$o-it-$i.txt | awk '{print $8, $12}' | tr '\n' ' ')"
  done
done
save
case "$gpu" in *H200*) ;; *) exit 0 ;; esac
timeout 100 dist/peerlink coll -o send_recv -b 8 -e 1G -f 2 --json $p/coll-send_recv.json >$p/coll-send_recv.txt 2>&1
echo "send_recv 8-1G: $?"
save
timeout 90 dist/peerlink coll -o reduce -b 64M -e 1G -f 2 --json $p/reduce-nccl.json >$p/reduce-nccl.txt 2>&1
echo "reduce 64M-1G: $?"
save
