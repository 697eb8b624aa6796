# Session 23 call E: the final code (LL lines for send/recv groups while a rank sends <= 256 KiB). The
# send/recv tests under AUTO (the correctness cases now in LL lines to 160 KB, every form back to back), then
# send/recv 8 B - 1 GiB against NCCL; on H200 also the reduce 64 MiB - 1 GiB against NCCL in the same run.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh e
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
t sendrecv 200 dist/tests/gpu_test_communicator \
  --gtest_filter='*AUTO_send_recv*:*PROTO_LL_send_recv*:CommunicatorSendRecv.*:Communicator.LaunchThreadsLeaveWhatTheCallingThreadLeaves'
save
timeout 100 dist/peerlink coll -o send_recv -b 8 -e 1G -f 2 --json $p/coll-send_recv.json >$p/coll-send_recv.txt 2>&1
echo "send_recv 8-1G: $?"
save
grep -A40 "ratio = best" $p/coll-send_recv.txt | grep -E "^ +(8|65536|262144|524288|67108864|1073741824) " | cut -c1-100
case "$gpu" in *H200*) ;; *) exit 0 ;; esac
timeout 90 dist/peerlink coll -o reduce -b 64M -e 1G -f 2 --json $p/reduce-nccl.json >$p/reduce-nccl.txt 2>&1
echo "reduce 64M-1G: $?"
save
grep -E "^ +(268435456|536870912|1073741824) +[0-9.]+ +[0-9.]+ +[0-9.]+ +nccl" $p/reduce-nccl.txt | cut -c1-100
