# Session 23 call G: `peerlink coll --iteration-times` (every eager iteration timed on its own). Its GPU test,
# then the ring reduce-scatter and the all-reduce at 512 MiB in four fresh processes each, 50 iterations:
# is a low cell slow throughout, or a few of its iterations? On H200 also send/recv 8 B - 1 GiB against NCCL.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh g
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
t bench 200 dist/tests/gpu_test_coll_bench --gtest_filter='GpuCollBench.IterationTimesForEagerCells'
save
for i in 1 2 3 4; do
  for op in reduce_scatter all_reduce; do
    timeout 60 dist/peerlink coll -o $op -b 512M -e 512M -n 50 -w 5 --no-nccl --iteration-times \
      --json $p/$op-$i.json >$p/$op-$i.txt 2>&1 || echo "$op $i failed"
  done
done
save
grep -h -A3 "iteration-times" $p/reduce_scatter-?.txt | grep -E "^ +536870912"
grep -h -A3 "iteration-times" $p/all_reduce-?.txt | grep -E "^ +536870912"
case "$gpu" in *H200*) ;; *) exit 0 ;; esac
timeout 100 dist/peerlink coll -o send_recv -b 8 -e 1G -f 2 --json $p/coll-send_recv.json >$p/coll-send_recv.txt 2>&1
echo "send_recv 8-1G: $?"
save
