# Session 24 call F: whether the two-shot all-reduce's statically assigned blocks end unevenly at 8-32 MiB
# (peerlink_ring_trace op=all_reduce mib=8/16/32, the direct-read reduction kernel traced: every block's start
# after the barrier and end before the closing one), fixed buffers, and 16 MiB on fresh buffers per cell.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
[ -e dist/peerlink_ring_trace ] || { xz -dc dist/extra/peerlink_ring_trace.xz >dist/peerlink_ring_trace && chmod +x dist/peerlink_ring_trace; }
source scripts/device/call-lib.sh f
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
for mib in 8 16 32; do
  timeout 60 dist/peerlink_ring_trace op=all_reduce mib=$mib cells=6 iterations=50 json=$p/ar$mib-trace.json >$p/ar$mib-trace.txt 2>&1
  echo "ar $mib: $? $(grep '^cell' $p/ar$mib-trace.txt | sed 's/.*median \([0-9.]*\).*/\1/' | tr '\n' ' ')"
done
timeout 60 dist/peerlink_ring_trace op=all_reduce mib=16 cells=6 iterations=50 realloc=1 json=$p/ar16-trace-realloc.json >$p/ar16-trace-realloc.txt 2>&1
echo "ar 16 realloc: $? $(grep '^cell' $p/ar16-trace-realloc.txt | sed 's/.*median \([0-9.]*\).*/\1/' | tr '\n' ' ')"
save
sed -n 1,7p $p/ar16-trace.txt | cut -c1-160
