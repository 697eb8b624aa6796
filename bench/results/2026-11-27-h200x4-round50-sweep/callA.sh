# Session 22 call A: every collective against NCCL (plain, graph, symmetric + graph) from 8 B to 1 GiB by
# factors of 2, 20 iterations, every configuration checked on the host — the final code of round 49 (the
# code of 3e53c81) on whatever the call gets. all-reduce, all-gather, reduce-scatter, all-to-all here; call B
# has broadcast, reduce and send/recv.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh a
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for c in ${SWEEP:-all_reduce all_gather reduce_scatter all_to_all}; do
  s=$(date +%s)
  timeout 170 dist/peerlink coll -o $c -b 8 -e 1G -f 2 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1
  echo "$c 8-1G: exit $? in $(( $(date +%s) - s )) s"
  save
done
