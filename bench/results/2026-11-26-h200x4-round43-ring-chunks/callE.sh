# Session 15 call E: the reduce's single ring chain on wider grids (PEERLINK_COLL_RING_REDUCE_BLOCKS) with
# smaller chunks, so that a round of the chain - and with it the fill - is shorter; forced ring, peerlink
# alone, 32 MiB - 1 GiB; then the ring reduce tests on the widest, smallest-chunk grid.
source scripts/device/call-lib.sh e
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
sweep() {  # sweep NAME ENV...
  local name=$1
  shift
  env PEERLINK_ALGO=RING "$@" timeout 60 dist/peerlink coll -o reduce -b 32M -e 1G -f 2 -n 10 -w 3 -c 0 --no-nccl --json $p/$name.json >$p/$name.txt 2>&1
  echo "$name: $?"
}
sweep rd-b32 PEERLINK_COLL_RING_REDUCE_BLOCKS=0
sweep rd-b64 PEERLINK_COLL_RING_REDUCE_BLOCKS=64
sweep rd-b64-c16k PEERLINK_COLL_RING_REDUCE_BLOCKS=64 PEERLINK_COLL_RING_CHUNK=16384
sweep rd-b128-c16k PEERLINK_COLL_RING_REDUCE_BLOCKS=128 PEERLINK_COLL_RING_CHUNK=16384
sweep rd-b128-c8k PEERLINK_COLL_RING_REDUCE_BLOCKS=128 PEERLINK_COLL_RING_CHUNK=8192
sweep rd-b32-again PEERLINK_COLL_RING_REDUCE_BLOCKS=0
save
PEERLINK_COLL_RING_REDUCE_BLOCKS=128 PEERLINK_COLL_RING_CHUNK=8192 t ring-reduce-b128 60 dist/tests/gpu_test_communicator --gtest_filter='*RING_reduce'
save
