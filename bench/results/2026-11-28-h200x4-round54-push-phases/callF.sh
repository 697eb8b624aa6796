# Session 26 call F: every collective against NCCL (plain, graph, symmetric + graph) from 8 B to 1 GiB by
# factors of 2, every configuration checked on the host, on the final code of the round (AUTO's two-phase
# push for all-reduces from 16 MiB), on whatever the call gets.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh f
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for c in all_reduce all_gather reduce_scatter all_to_all broadcast reduce send_recv; do
  s=$(date +%s)
  timeout 150 dist/peerlink coll -o $c -b 8 -e 1G -f 2 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1
  echo "$c 8-1G: exit $? in $(( $(date +%s) - s )) s"
  save
done
