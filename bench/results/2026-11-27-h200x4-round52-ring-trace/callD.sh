# Session 24 call D: the final code. The ring-forced correctness cases (every collective, the 64 Mi-element
# ones), ranks sharing GPUs on the rings, the pace test, the coll harness and bad input; then every collective
# at 512 MiB against NCCL. On H200 also send/recv and the reduce against NCCL.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh d
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
t pace 60 dist/tests/gpu_test_coll_ring_pace
t ring 240 dist/tests/gpu_test_communicator --gtest_filter='*RING*:CommunicatorRing.*:EveryCollective/CommunicatorLarge.*'
save
t shared 200 dist/tests/gpu_test_communicator_shared --gtest_filter='Rings/*:SharedGpuCommunicator.*'
t bench 300 dist/tests/gpu_test_coll_bench
t errors 120 dist/tests/gpu_test_coll_errors
save
for o in all_reduce reduce_scatter all_gather all_to_all broadcast reduce send_recv; do
  timeout 60 dist/peerlink coll -o $o -b 512M -e 512M --json $p/$o-512M.json >$p/$o-512M.txt 2>&1
  echo "$o 512M: $? $(grep -A4 'ratio = best' $p/$o-512M.txt | grep -E '^ +536870912' | head -1 | cut -c1-95)"
done
save
case "$gpu" in *H200*) ;; *) exit 0 ;; esac
timeout 100 dist/peerlink coll -o send_recv -b 8 -e 1G -f 2 --json $p/coll-send_recv.json >$p/coll-send_recv.txt 2>&1
echo "send_recv 8-1G: $?"
save
timeout 90 dist/peerlink coll -o reduce -b 64M -e 1G -f 2 --json $p/reduce-nccl.json >$p/reduce-nccl.txt 2>&1
echo "reduce 64M-1G: $?"
save
