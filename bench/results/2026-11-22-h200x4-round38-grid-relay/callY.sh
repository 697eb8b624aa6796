# Session 9 call Y (wip/ring-claim 0b2f3c6, the code of call V): blocks claiming chunks on fewer blocks,
# where call X saw a quarter of 32 blocks finish 1.4x after the rest with the link idle meanwhile
source scripts/device/call-lib.sh y
for cfg in "reduce:" "reduce:64" "reduce:48" "reduce:32" "reduce:24" "reduce_scatter:64" "all_reduce:64"; do
  c=${cfg%%:*}; cap=${cfg#*:}
  env ${cap:+PEERLINK_COLL_MAX_BLOCKS=$cap} PEERLINK_ALGO=RING timeout 40 dist/peerlink coll -o $c -b 32M -e 512M -f 2 --no-nccl --json $p/$c-$cap.json > $p/$c-$cap.txt 2>&1
  echo "$c cap '$cap': exit $? $(grep -E '^ +[0-9]+ ' $p/$c-$cap.txt | awk '{printf "%s ", $6}' | head -c 300)"
done
save
