# Session 15 call B: the ring broadcast in 64 rounds of at most 32 KiB per block and from 128 MiB under AUTO,
# the reduce chains of 128-block grids in 32 KiB chunks. The rings' correctness tests (4 GPUs, and 3-8 ranks
# sharing them), the graph tests; then broadcast, reduce and reduce-scatter against NCCL, 8 B - 512 MiB (x4)
# and 32 MiB - 1 GiB (x2).
source scripts/device/call-lib.sh b
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t comm 240 dist/tests/gpu_test_communicator --gtest_filter='*RING_*:*AUTO_broadcast:*AUTO_reduce:*AUTO_reduce_scatter:*AUTO_all_reduce:*Large*'
save
t shared 150 dist/tests/gpu_test_communicator_shared --gtest_filter='Rings/*'
t graph 150 dist/tests/gpu_test_coll_graph --gtest_filter='-CommunicatorDeadline.*'
save
for c in broadcast reduce reduce_scatter; do
  timeout 150 dist/peerlink coll -o $c -b 8 -e 512M -f 4 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c 8-512M: $?"
  save
done
for c in broadcast reduce reduce_scatter; do
  timeout 150 dist/peerlink coll -o $c -b 32M -e 1G -f 2 --json $p/large-$c.json >$p/large-$c.txt 2>&1; echo "$c 32M-1G: $?"
  save
done
