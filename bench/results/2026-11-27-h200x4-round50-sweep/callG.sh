# Session 22 call G: the final code (send/recv on the copy engines from 64 MiB a rank). The send/recv tests
# again (the mixed-groups test now with 32 MiB per pair), send/recv 8 B - 1 GiB against NCCL under AUTO; on
# H200s also call F's ring reduce grids and chunks (peerlink alone, forced ring, 256 MiB - 1 GiB).
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh g
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
t sendrecv 200 dist/tests/gpu_test_communicator \
  --gtest_filter='CommunicatorSendRecv.*:*CE_send_recv:*AUTO_send_recv:*SixtyFourMillionElements/send_recv'
save
timeout 120 dist/peerlink coll -o send_recv -b 8 -e 1G -f 2 --json $p/coll-send_recv.json >$p/coll-send_recv.txt 2>&1
echo "send_recv 8-1G: $?"
save
case "$gpu" in *H200*) ;; *) exit 0 ;; esac
sweep() {  # sweep NAME ENV...
  local name=$1
  shift
  env PEERLINK_ALGO=RING "$@" timeout 60 dist/peerlink coll -o reduce -b 256M -e 1G -f 2 -n 10 -w 3 -c 0 --no-nccl \
    --json $p/$name.json >$p/$name.txt 2>&1
  echo "$name: $?"
}
sweep rd-default
sweep rd-b24 PEERLINK_COLL_RING_REDUCE_BLOCKS=24
sweep rd-b48 PEERLINK_COLL_RING_REDUCE_BLOCKS=48
sweep rd-b32-c128k PEERLINK_COLL_RING_REDUCE_BLOCKS=32 PEERLINK_COLL_RING_CHUNK=131072
sweep rd-default-2
save
