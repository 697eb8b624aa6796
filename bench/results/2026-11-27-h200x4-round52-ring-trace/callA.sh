# Session 24 call A: what sets the ring reduce-scatter's per-cell rate at 512 MiB. peerlink_ring_trace
# (every block's SM, chain, times, rounds and waits in each cell's last call) in fresh processes: cells out of
# place, cells after 0-4 idle blocks on every GPU (perturb), cells on fresh buffers (realloc). Then whether the
# trace hook costs the untraced kernels anything: the reduce-scatter at 512 MiB, the old binary (ce57648, no
# hook) and the new alternated. On H200 also send/recv 8 B - 1 GiB and the reduce 64 MiB - 1 GiB against NCCL.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
[ -e dist/peerlink_ring_trace ] || { xz -dc dist/extra/peerlink_ring_trace.xz >dist/peerlink_ring_trace && chmod +x dist/peerlink_ring_trace; }
[ -e dist/peerlink_old ] || { xz -dc dist/extra/peerlink_old.xz >dist/peerlink_old && chmod +x dist/peerlink_old; }
source scripts/device/call-lib.sh a
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
nvidia-smi topo -m >$p/topo.txt 2>&1
for i in 1 2; do
  timeout 60 dist/peerlink_ring_trace cells=16 json=$p/trace-out-$i.json >$p/trace-out-$i.txt 2>&1
  echo "out $i: $?"; grep "^cell" $p/trace-out-$i.txt | awk '{printf "%s ", $6}'; echo
done
save
timeout 60 dist/peerlink_ring_trace cells=20 perturb=1 json=$p/trace-perturb.json >$p/trace-perturb.txt 2>&1
echo "perturb: $?"; grep "^cell" $p/trace-perturb.txt | awk '{printf "%s:%s ", $5, $7}'; echo
timeout 90 dist/peerlink_ring_trace cells=16 realloc=1 json=$p/trace-realloc.json >$p/trace-realloc.txt 2>&1
echo "realloc: $?"; grep "^cell" $p/trace-realloc.txt | awk '{printf "%s ", $6}'; echo
timeout 60 dist/peerlink_ring_trace cells=16 placement=alt json=$p/trace-alt.json >$p/trace-alt.txt 2>&1
echo "alt: $?"; grep "^cell" $p/trace-alt.txt | awk '{printf "%s ", $6}'; echo
save
for i in 1 2; do
  for b in old new; do
    bin=dist/peerlink; [ $b = old ] && bin=dist/peerlink_old
    timeout 60 $bin coll -o reduce_scatter -b 512M -e 512M -n 20 --no-nccl --json $p/rs-$b-$i.json >$p/rs-$b-$i.txt 2>&1
    echo "rs $b $i: $? $(grep -E '^ +536870912' $p/rs-$b-$i.txt | cut -c1-110)"
  done
done
save
case "$gpu" in *H200*) ;; *) exit 0 ;; esac
timeout 100 dist/peerlink coll -o send_recv -b 8 -e 1G -f 2 --json $p/coll-send_recv.json >$p/coll-send_recv.txt 2>&1
echo "send_recv 8-1G: $?"
save
timeout 90 dist/peerlink coll -o reduce -b 64M -e 1G -f 2 --json $p/reduce-nccl.json >$p/reduce-nccl.txt 2>&1
echo "reduce 64M-1G: $?"
save
grep -A40 "ratio = best" $p/coll-send_recv.txt | grep -E "^ +(8|65536|262144|1073741824) " | cut -c1-100
grep -E "^ +(268435456|536870912|1073741824) +[0-9.]+ +[0-9.]+ +[0-9.]+ +nccl" $p/reduce-nccl.txt | cut -c1-100
