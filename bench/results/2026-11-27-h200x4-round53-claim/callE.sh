# Session 25 call E: the all-reduce from 8 B to 32 MiB against NCCL in 200-iteration cells (as the small-message
# targets were set), twice in fresh processes, on the round's final code.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh e
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for i in 1 2; do
  s=$(date +%s)
  timeout 200 dist/peerlink coll -o all_reduce -b 8 -e 32M -f 2 -n 200 --json $p/ar-n200-$i.json >$p/ar-n200-$i.txt 2>&1
  echo "all_reduce 8-32M n200 $i: exit $? in $(( $(date +%s) - s )) s"
  save
done
