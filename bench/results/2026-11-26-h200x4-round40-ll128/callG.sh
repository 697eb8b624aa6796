# Session 12 call G on nvidia-h200-x4 (run as one command line, recorded here), the binary of call F: AUTO
# against LL128 forced (PEERLINK_PROTO=LL128) from 64 KiB to 1 MiB for every collective, to see how far
# LL128 one-shot beats what AUTO ran past LL's size limit.
source scripts/device/call-lib.sh g >/dev/null
for c in all_reduce all_gather reduce_scatter broadcast reduce all_to_all; do
  for proto in AUTO LL128; do
    PEERLINK_PROTO=$proto timeout 40 dist/peerlink coll --no-nccl -o $c -b 64K -e 1M -f 2 -n 100 --json $p/range-$c-$proto.json >$p/range-$c-$proto.txt 2>&1 || echo "$c $proto failed"
  done
done
save
python3 scripts/coll_graph_times.py $p/range-*.json
