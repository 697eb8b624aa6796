# Session 27 call C (first call on 4x H200 since round 50): all-reduce against NCCL in 200-iteration cells
# from 4 to 64 MiB (AUTO's two-phase push from 16 MiB, never run on H200 before), then all-reduce, all-gather,
# reduce-scatter and all-to-all against NCCL (plain, graph, symmetric + graph) from 8 B to 1 GiB by factors
# of 2, every configuration checked on the host; build 6b2434d (the round's code).
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh c
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
timeout 150 dist/peerlink coll -o all_reduce -b 4M -e 64M -f 2 -n 200 --json $p/ar-nccl-200.json >$p/ar-nccl-200.txt 2>&1
echo "all_reduce 4-64M x200: $? $(awk '/vs the best NCCL/{f=1} f && /^ +[0-9]+ /{printf "%s:%s/%s ", $1, $6, $7}' $p/ar-nccl-200.txt)"
save
for c in all_reduce all_gather reduce_scatter all_to_all; do
  s=$(date +%s)
  timeout 130 dist/peerlink coll -o $c -b 8 -e 1G -f 2 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1
  echo "$c 8-1G: exit $? in $(( $(date +%s) - s )) s"
  save
done
