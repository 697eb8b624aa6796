# Session 23 call K: where an eager send/recv group's host time goes (peerlink_host_cost: whole groups of a
# ring shift of 8 bytes, their calls apart from groupEnd; the all-reduce's figures beside them), twice.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
[ -e dist/peerlink_host_cost ] || { xz -dc dist/extra/peerlink_host_cost.xz >dist/peerlink_host_cost && chmod +x dist/peerlink_host_cost; }
source scripts/device/call-lib.sh k
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for i in 1 2; do
  timeout 120 dist/peerlink_host_cost 20000 >$p/host-cost-$i.txt 2>&1
  echo "host cost $i: $?"
done
save
grep -h -E "allReduce, [0-9] GPUs|send/recv" $p/host-cost-?.txt
