# Session 13 call B2 on nvidia-h200-x4, the binary of calls A-B: call B forced only the line format, which
# leaves all-reduce and reduce past one-shot's limit on two-shot; here LL128 one-shot (PEERLINK_ALGO=ONESHOT
# PEERLINK_PROTO=LL128) against AUTO at 256 KiB - 1 MiB per rank, every collective (all-gather,
# reduce-scatter: totals of 1 - 4 MiB, i.e. 256 KiB - 1 MiB per rank).
source scripts/device/call-lib.sh b2
for round in 1 2; do
  for mode in AUTO ONESHOT-LL128; do
    if [ $mode = AUTO ]; then env="PEERLINK_ALGO=AUTO PEERLINK_PROTO=AUTO"; else env="PEERLINK_ALGO=ONESHOT PEERLINK_PROTO=LL128"; fi
    for c in all_reduce reduce broadcast; do
      for range in "256K 1M" "384K 768K"; do
        set -- $range
        env $env timeout 40 dist/peerlink coll --no-nccl -o $c -b $1 -e $2 -f 2 -n 100 --json $p/r$round-$c-$1-$mode.json >$p/r$round-$c-$1-$mode.txt 2>&1 || echo "$round $c $1 $mode failed"
      done
    done
    for c in all_gather reduce_scatter all_to_all; do
      env $env timeout 40 dist/peerlink coll --no-nccl -o $c -b 1M -e 4M -f 2 -n 100 --json $p/r$round-$c-$mode.json >$p/r$round-$c-$mode.txt 2>&1 || echo "$round $c $mode failed"
    done
  done
done
for c in all_reduce reduce broadcast all_gather reduce_scatter all_to_all; do python3 scripts/coll_graph_times.py $p/r*-$c-*.json; done | tee $p/times.txt
save
