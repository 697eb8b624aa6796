# Session 16 call B: the final code (the ring broadcast from 64 MiB, the ring reduce from 32 MiB under AUTO).
# The back-to-back ring test, now with every call queued before the host works out the expected values and
# 20 ms between the refills, with the final code and the negative control (control-no-wait.diff); the graph
# tests; broadcast, reduce and reduce-scatter against NCCL, 8 B - 512 MiB (x4) and 32 MiB - 1 GiB (x2); every
# collective at 512 MiB and the small all-reduce in 200-iteration graphs; the reduce's chunks and grid at
# 16 - 256 MiB with the neighbour start (forced ring, peerlink alone).
source scripts/device/call-lib.sh b
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t back-to-back 60 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorRing.*'
t control-no-wait 60 dist/tests/gpu_test_communicator_nowait --gtest_filter='CommunicatorRing.*'
save
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
for c in all_reduce all_gather all_to_all; do
  timeout 60 dist/peerlink coll -o $c -b 512M -e 512M --json $p/coll-$c-512M.json >$p/coll-$c-512M.txt 2>&1; echo "$c 512M: $?"
done
save
timeout 150 dist/peerlink coll -o all_reduce -b 8 -e 32M -f 2 -n 200 --json $p/coll-all_reduce-n200.json >$p/coll-all_reduce-n200.txt 2>&1; echo "ar n200: $?"
save
sweep() {  # sweep NAME ENV...
  local name=$1
  shift
  env PEERLINK_ALGO=RING "$@" timeout 60 dist/peerlink coll -o reduce -b 16M -e 256M -f 2 -n 10 -w 3 -c 0 --no-nccl --json $p/$name.json >$p/$name.txt 2>&1
  echo "$name: $?"
}
sweep rd-b32-c64k PEERLINK_COLL_RING_REDUCE_BLOCKS=0
sweep rd-b32-c32k PEERLINK_COLL_RING_REDUCE_BLOCKS=0 PEERLINK_COLL_RING_CHUNK=32768
sweep rd-b64-c32k PEERLINK_COLL_RING_REDUCE_BLOCKS=64
sweep rd-b64-c16k PEERLINK_COLL_RING_REDUCE_BLOCKS=64 PEERLINK_COLL_RING_CHUNK=16384
sweep rd-b16-c64k PEERLINK_COLL_RING_REDUCE_BLOCKS=16
save
