# Session 21 call G: eager all-reduce 8 B - 64 KiB as round 48 measured it (200 iterations, three fresh
# processes, no NCCL), then once against NCCL 8 B - 1 MiB: call F's 20-iteration runs put one median above
# 10 us on its machine.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh g
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for i in 1 2 3; do
  timeout 60 dist/peerlink coll -o all_reduce -b 8 -e 64K -f 2 -n 200 --no-nccl --json $p/ar-$i.json >$p/ar-$i.txt 2>&1
  echo "all_reduce $i: $?"
done
save
timeout 120 dist/peerlink coll -o all_reduce -b 8 -e 1M -f 4 -n 200 --json $p/ar-nccl.json >$p/ar-nccl.txt 2>&1
echo "all_reduce vs NCCL: $? $(grep 'created in' $p/ar-nccl.txt)"
save
