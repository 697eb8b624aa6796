# Session 27 call G (4x H200, the machine of calls B-F): the small all-reduce targets on this round's code
# (8 B - 64 KiB against NCCL, 200-iteration cells, two fresh processes), and the 512 MiB all-reduce in three
# fresh processes (peerlink alone, 20-iteration cells).
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh g
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for i in 1 2; do
  timeout 120 dist/peerlink coll -o all_reduce -b 8 -e 64K -f 2 -n 200 --json $p/ar-small-$i.json >$p/ar-small-$i.txt 2>&1
  echo "all_reduce 8-64K x200 $i: $? $(awk '/vs the best NCCL/{f=1} f && /^ +[0-9]+ /{printf "%s:%s/%s ", $1, $2, $3}' $p/ar-small-$i.txt)"
  save
done
for i in 1 2 3; do
  timeout 60 dist/peerlink coll -o all_reduce -b 512M -e 512M -n 20 --no-nccl --json $p/ar-512-$i.json >$p/ar-512-$i.txt 2>&1
  echo "all_reduce 512M $i: $? $(awk '/^# == peerlink/{s=$3} /^ +536870912 /{printf "%s %s/%s ", s, $8, $12}' $p/ar-512-$i.txt)"
done
save
