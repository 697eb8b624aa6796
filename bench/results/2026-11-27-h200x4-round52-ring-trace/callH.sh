# Session 24 call H: after call G, the traced kernels' record start shared (startTrace) and the pace test
# through runCase: the pace test, the two-shot and ring broadcast / reduce correctness cases, and one traced
# cell of each traced kernel (the records still filled in).
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
[ -e dist/peerlink_ring_trace ] || { xz -dc dist/extra/peerlink_ring_trace.xz >dist/peerlink_ring_trace && chmod +x dist/peerlink_ring_trace; }
source scripts/device/call-lib.sh h
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
t pace 60 dist/tests/gpu_test_coll_ring_pace
t correct 150 dist/tests/gpu_test_communicator --gtest_filter='*TWOSHOT*:*RING_broadcast*:*RING_reduce*:CommunicatorSplitTwoShot.*'
save
for op in reduce_scatter broadcast; do
  timeout 30 dist/peerlink_ring_trace op=$op cells=1 >$p/trace-$op.txt 2>&1; echo "$op: $?"
done
timeout 30 dist/peerlink_ring_trace op=all_reduce mib=16 cells=1 >$p/trace-ar16.txt 2>&1; echo "ar16: $?"
save
grep -h -A2 "^cell" $p/trace-*.txt | cut -c1-150
