# Session 8 call L (experiment build 83a6793 = main 4423236 + relay-lead.diff): the split relay with its
# caller's stripe taking PEERLINK_X_RELAY_LEAD_KIB more and/or the gated stripes launched first
source scripts/device/call-lib.sh l
timeout 40 dist/peerlink bench -t d2d_write_ce -b 16M -e 256M -f 4 --json $p/ref.json > $p/ref.txt 2>&1; echo "ref: $?"
i=0
for cfg in "0:" "0:1" "1024:1" "2048:1" "1024:" "0:"; do
  i=$((i+1)); lead=${cfg%:*}; first=${cfg#*:}
  if [ -n "$first" ]; then export PEERLINK_X_RELAY_OTHERS_FIRST=1; else unset PEERLINK_X_RELAY_OTHERS_FIRST; fi
  PEERLINK_X_RELAY_LEAD_KIB=$lead timeout 40 dist/peerlink bench -t d2d_relay_split -b 16M -e 256M -f 4 --json $p/split-$i-lead$lead-first$first.json > $p/split-$i.txt 2>&1; echo "split $i lead $lead first '$first': $?"
done
unset PEERLINK_X_RELAY_OTHERS_FIRST
save
