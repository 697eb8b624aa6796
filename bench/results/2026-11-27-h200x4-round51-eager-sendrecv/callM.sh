# Session 23 call M: peerlink_host_cost of call K's build (2a7fca7: LL jobs in a map and vectors per rank)
# against this commit's (placeP2pLlJobs: straight into the arguments), alternated, three runs each, on one
# machine: an eager send/recv group's host time, whole and split, beside the all-reduce's.
for tool in peerlink peerlink_host_cost peerlink_host_cost_old; do
  [ -e dist/$tool ] || { xz -dc dist/extra/$tool.xz >dist/$tool && chmod +x dist/$tool; }
done
source scripts/device/call-lib.sh m
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for i in 1 2 3; do
  timeout 60 dist/peerlink_host_cost_old 20000 >$p/old-$i.txt 2>&1
  echo "old $i: $?"
  timeout 60 dist/peerlink_host_cost 20000 >$p/new-$i.txt 2>&1
  echo "new $i: $?"
done
save
for f in $p/old-?.txt $p/new-?.txt; do
  echo "$(basename $f): $(grep -E 'out of place, per rank ' $f | awk '{print $NF}') $(grep -E 'per group' $f | awk '{print $NF}') $(grep -E 'groupEnd' $f | awk '{print $(NF-4), $NF}')"
done
