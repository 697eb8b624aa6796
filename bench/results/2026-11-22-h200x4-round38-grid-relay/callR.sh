# Session 9 call R (experiment build wip/ring-stages = main 585eac9 + experiment-ring-stages.diff): the forced
# ring reduce with fewer blocks, smaller chunks and more slots per block. dist/peerlink: 4 slots (main's);
# dist/peerlink-x8: built with -DPEERLINK_X_RING_STAGES=8. PEERLINK_X_RING_CAP caps the ring reduce's grid,
# PEERLINK_X_MAXCHUNK_KIB its chunk (the stage's 32 MiB / (slots x blocks) caps it too)
source scripts/device/call-lib.sh r
i=0
for cfg in "peerlink::" "peerlink:32:" "peerlink:32:32" "peerlink-x8::" "peerlink-x8:32:" "peerlink-x8:32:32" "peerlink-x8:24:" "peerlink-x8:48:32" "peerlink-x8:64:32" "peerlink-x8:32:16" "peerlink::"; do
  i=$((i+1)); bin=${cfg%%:*}; rest=${cfg#*:}; cap=${rest%%:*}; chunk=${rest#*:}
  env ${cap:+PEERLINK_X_RING_CAP=$cap} ${chunk:+PEERLINK_X_MAXCHUNK_KIB=$chunk} PEERLINK_ALGO=RING \
    timeout 60 dist/$bin coll -o reduce -b 16M -e 512M -f 2 --no-nccl --json $p/ring-$i.json > $p/ring-$i.txt 2>&1
  echo "$i $bin cap '$cap' chunk '$chunk': exit $? $(grep -E '^ +[0-9]+ ' $p/ring-$i.txt | awk '{printf "%s ", $6}' | head -c 400)"
done
save
