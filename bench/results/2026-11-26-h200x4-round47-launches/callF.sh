# Session 19 call F: why eager calls are slower with NCCL in the process (call B: 8.3-10.2 us against 6.4-8.9
# without). peerlink_host_cost with `nccl`: its rows, then the eager all-reduce and the raw launches again
# while NCCL's communicators on the four GPUs are alive; with the launch threads and without. Then the
# final build's eager all-reduce 8 B - 64 KiB against NCCL in 200-iteration runs.
source scripts/device/call-lib.sh f
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
xz -dc dist/extra/peerlink_host_cost.xz >dist/peerlink_host_cost && chmod +x dist/peerlink_host_cost
for th in 1000 0; do
  PEERLINK_COLL_LAUNCH_THREADS=$th timeout 90 dist/peerlink_host_cost 20000 nccl >$p/host-cost-nccl-$th.txt 2>&1
  echo "host cost threads=$th: $?"; cat $p/host-cost-nccl-$th.txt
done
save
for i in 1 2; do
  timeout 90 dist/peerlink coll -o all_reduce -b 8 -e 64K -f 2 -n 200 --json $p/ar-small-$i.json >$p/ar-small-$i.txt 2>&1; echo "all_reduce 8-64K vs NCCL $i: $?"
  save
done
