# Session 9 call W (wip/ring-head-lockstep 84202b1 = main + experiment-head-lockstep.diff): the ring reduce's
# head stores round k < PEERLINK_X_HEAD_LOCKSTEP only after round k-1's ready flag is released, so the
# first rounds' releases do not wait behind the next rounds' stores
source scripts/device/call-lib.sh w
for cfg in "reduce:0" "reduce:1" "reduce:2" "reduce:4" "reduce:16" "reduce:0" "reduce_scatter:0" "reduce_scatter:2" "all_reduce:0" "all_reduce:2"; do
  c=${cfg%%:*}; r=${cfg#*:}
  PEERLINK_X_HEAD_LOCKSTEP=$r PEERLINK_ALGO=RING timeout 60 dist/peerlink coll -o $c -b 16M -e 512M -f 2 --no-nccl --json $p/$c-$r.json > $p/$c-$r.txt 2>&1
  echo "$c lockstep $r: exit $? $(grep -E '^ +[0-9]+ ' $p/$c-$r.txt | awk '{printf "%s ", $6}' | head -c 300)"
done
save
