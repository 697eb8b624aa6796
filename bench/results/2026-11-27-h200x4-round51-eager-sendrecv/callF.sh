# Session 23 call F: is the ring reduce-scatter's 512 MiB spread (calls B, C: low cells mostly a process's
# first) a warm-up effect? Reduce-scatter 512 MiB in fresh processes, alternating 5 warm-up iterations (the
# default) with 50, while nvidia-smi samples the GPUs' SM clocks and power every 100 ms (read only). On H200
# also send/recv 8 B - 1 GiB and the reduce 64 MiB - 1 GiB against NCCL with the final code.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh f
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv -lms 100 \
  >$p/clocks.csv 2>&1 &
sampler=$!
for i in 1 2 3 4; do
  for w in 5 50; do
    echo "$(date +%T.%N) start w$w-$i" >>$p/marks.txt
    timeout 40 dist/peerlink coll -o reduce_scatter -b 512M -e 512M -n 20 -w $w --no-nccl --json $p/rs-w$w-$i.json \
      >$p/rs-w$w-$i.txt 2>&1 || echo "w$w $i failed"
    echo "$(date +%T.%N) end w$w-$i" >>$p/marks.txt
  done
done
kill $sampler
save
for w in 5 50; do echo "w$w: $(grep -hE '^ +536870912 ' $p/rs-w$w-?.txt | awk '{printf "%s/%s ", $8, $12}')"; done
case "$gpu" in *H200*) ;; *) exit 0 ;; esac
timeout 100 dist/peerlink coll -o send_recv -b 8 -e 1G -f 2 --json $p/coll-send_recv.json >$p/coll-send_recv.txt 2>&1
echo "send_recv 8-1G: $?"
save
timeout 90 dist/peerlink coll -o reduce -b 64M -e 1G -f 2 --json $p/reduce-nccl.json >$p/reduce-nccl.txt 2>&1
echo "reduce 64M-1G: $?"
save
grep -A40 "ratio = best" $p/coll-send_recv.txt | grep -E "^ +(8|65536|262144|1073741824) " | cut -c1-100
grep -E "^ +(268435456|536870912|1073741824) +[0-9.]+ +[0-9.]+ +[0-9.]+ +nccl" $p/reduce-nccl.txt | cut -c1-100
