# Session 20 call F: what the checks' CUDA queries cost on another GPU's buffer and stream (the calls of
# ranks 1-3 make them with GPU 0 current), by the runtime and by the driver; peerlink_host_cost twice.
# The CLI travels compressed (the carry limit): unpacked before call-lib.sh runs it.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh f
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
xz -dc dist/extra/peerlink_host_cost.xz >dist/peerlink_host_cost && chmod +x dist/peerlink_host_cost
for i in 1 2; do
  timeout 60 dist/peerlink_host_cost 20000 >$p/host-cost-$i.txt 2>&1; echo "host cost $i: $?"
  cat $p/host-cost-$i.txt
done
save
