# Session 24 call E: whether the ring broadcast's statically assigned blocks end unevenly at 512 MiB
# (peerlink_ring_trace op=broadcast: every block's start and end in each cell's last call), on fixed buffers
# in two processes and on fresh buffers per cell; the reduce-scatter beside it for its block tail.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
[ -e dist/peerlink_ring_trace ] || { xz -dc dist/extra/peerlink_ring_trace.xz >dist/peerlink_ring_trace && chmod +x dist/peerlink_ring_trace; }
source scripts/device/call-lib.sh e
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
for i in 1 2; do
  timeout 60 dist/peerlink_ring_trace op=broadcast cells=8 json=$p/bc-trace-$i.json >$p/bc-trace-$i.txt 2>&1
  echo "bc $i: $? $(grep '^cell' $p/bc-trace-$i.txt | sed 's/.*busbw \([0-9.]*\).*/\1/' | tr '\n' ' ')"
done
timeout 90 dist/peerlink_ring_trace op=broadcast cells=8 realloc=1 json=$p/bc-trace-realloc.json >$p/bc-trace-realloc.txt 2>&1
echo "bc realloc: $? $(grep '^cell' $p/bc-trace-realloc.txt | sed 's/.*busbw \([0-9.]*\).*/\1/' | tr '\n' ' ')"
timeout 60 dist/peerlink_ring_trace op=reduce_scatter cells=4 json=$p/rs-trace.json >$p/rs-trace.txt 2>&1
echo "rs: $?"
save
sed -n 1,12p $p/bc-trace-1.txt | cut -c1-200
