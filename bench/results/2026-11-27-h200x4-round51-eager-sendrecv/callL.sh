# Session 23 call L: the LL jobs placed straight into the kernels' arguments (no allocation per rank on the
# launch path). The send/recv tests again (AUTO and forced LL correctness, every form back to back, the
# launch threads; the deadline and shared-GPU suites stayed home: the tree and dist must fit 64 MiB), then
# peerlink_host_cost twice.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
[ -e dist/peerlink_host_cost ] || { xz -dc dist/extra/peerlink_host_cost.xz >dist/peerlink_host_cost && chmod +x dist/peerlink_host_cost; }
source scripts/device/call-lib.sh l
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t sendrecv 200 dist/tests/gpu_test_communicator \
  --gtest_filter='*AUTO_send_recv*:*PROTO_LL_send_recv*:*CE_send_recv*:CommunicatorSendRecv.*:Communicator.LaunchThreadsLeaveWhatTheCallingThreadLeaves'
save
for i in 1 2; do
  timeout 120 dist/peerlink_host_cost 20000 >$p/host-cost-$i.txt 2>&1
  echo "host cost $i: $?"
done
save
grep -h -E "allReduce, [0-9] GPUs, 8 B, out of place, per|send/recv" $p/host-cost-?.txt
