# Session 9 calls T and U (experiment build wip/ring-timeline = main 585eac9 + experiment-ring-timeline.diff, the
# library built with -DPEERLINK_X_RING_TIMELINE): where the forced ring reduce's time goes, per chain position
source scripts/device/call-lib.sh t
for mib in 32 64 256; do
  timeout 60 dist/peerlink_ring_timeline $mib > $p/timeline-$mib.txt 2>&1; echo "timeline $mib MiB: $?"
  sed -n '/sample 2/,$p' $p/timeline-$mib.txt
done
PEERLINK_COLL_MAX_BLOCKS=32 timeout 60 dist/peerlink_ring_timeline 64 > $p/timeline-64-cap32.txt 2>&1; echo "timeline 64 MiB on 32 blocks: $?"
sed -n '/sample 2/,$p' $p/timeline-64-cap32.txt
save
