# Session 15 call A: the rings' chunk and grid (PEERLINK_COLL_RING_CHUNK, PEERLINK_COLL_MAX_BLOCKS) for
# broadcast and reduce forced onto the ring from 32 MiB to 1 GiB, peerlink alone (no check: a sweep), then
# AUTO and NCCL over the same sizes; the ring all-reduce and reduce-scatter at 128-512 MiB by chunk.
source scripts/device/call-lib.sh a
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
sweep() {  # sweep NAME COLLECTIVE MIN MAX ENV...
  local name=$1 c=$2 lo=$3 hi=$4
  shift 4
  env "$@" timeout 90 dist/peerlink coll -o $c -b $lo -e $hi -f 2 -n 10 -w 3 -c 0 --no-nccl --json $p/$name.json >$p/$name.txt 2>&1
  echo "$name: $?"
}
for chunk in 0 32768 16384 8192 4096; do
  sweep bc-ring-c$chunk broadcast 32M 1G PEERLINK_ALGO=RING PEERLINK_COLL_RING_CHUNK=$chunk
done
for blocks in 32 64; do
  sweep bc-ring-b$blocks broadcast 32M 1G PEERLINK_ALGO=RING PEERLINK_COLL_MAX_BLOCKS=$blocks
done
sweep bc-ring-b64-c32768 broadcast 32M 1G PEERLINK_ALGO=RING PEERLINK_COLL_MAX_BLOCKS=64 PEERLINK_COLL_RING_CHUNK=32768
save
for chunk in 0 32768 16384 8192; do
  sweep rd-ring-c$chunk reduce 32M 1G PEERLINK_ALGO=RING PEERLINK_COLL_RING_CHUNK=$chunk
done
sweep rd-ring-b24 reduce 32M 1G PEERLINK_ALGO=RING PEERLINK_COLL_MAX_BLOCKS=24
sweep rd-ring-b24-c32768 reduce 32M 1G PEERLINK_ALGO=RING PEERLINK_COLL_MAX_BLOCKS=24 PEERLINK_COLL_RING_CHUNK=32768
save
for chunk in 0 32768 16384; do
  sweep ar-ring-c$chunk all_reduce 128M 512M PEERLINK_ALGO=RING PEERLINK_COLL_RING_CHUNK=$chunk
  sweep rs-ring-c$chunk reduce_scatter 128M 512M PEERLINK_ALGO=RING PEERLINK_COLL_RING_CHUNK=$chunk
done
save
for c in broadcast reduce; do
  timeout 120 dist/peerlink coll -o $c -b 32M -e 1G -f 2 -n 10 -w 3 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c AUTO+NCCL: $?"
  save
done
# The ring kernels' results with 4 KiB chunks (many rounds per block), every collective the ring serves.
PEERLINK_COLL_RING_CHUNK=4096 t ring-chunk4k 150 dist/tests/gpu_test_communicator --gtest_filter='*RING_*'
save
