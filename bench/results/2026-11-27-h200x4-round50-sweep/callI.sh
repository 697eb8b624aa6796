# Session 22 call I: the final code (the reduce's single chain in 128 KiB rounds from 256 MiB). The ring
# reduce's tests (forced ring, every type and op; back to back on shared buffers; the 64 Mi-element reduce,
# 256 MiB: the new chunk under AUTO), then reduce 32 MiB - 1 GiB against NCCL, checked.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh i
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t ring-reduce 200 dist/tests/gpu_test_communicator \
  --gtest_filter='*RING_reduce:*SixtyFourMillionElements/reduce:CommunicatorRing.*'
save
timeout 90 dist/peerlink coll -o reduce -b 32M -e 1G -f 2 --json $p/coll-reduce.json >$p/coll-reduce.txt 2>&1
echo "reduce 32M-1G: $?"
save
