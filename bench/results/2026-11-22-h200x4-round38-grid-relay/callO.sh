# Session 9 call O (experiment build wip/reduce-blocks = main + experiment-reduce-blocks.diff):
# PEERLINK_X_REDUCE=BLOCKS[:KIB] caps the grid of the two-shot reduce whose non-root ranks reduce into the
# root, and moves the size below which every rank (the root too) reduces a shard (default 16 MiB)
source scripts/device/call-lib.sh o
COLL_LIST="reduce" CROSS_MIN=1M CROSS_MAX=128M \
  CROSS_VARIANTS="PEERLINK_X_REDUCE=24 PEERLINK_X_REDUCE=32 PEERLINK_X_REDUCE=48 PEERLINK_X_REDUCE=16:0 PEERLINK_X_REDUCE=24:0 PEERLINK_X_REDUCE=32:0 PEERLINK_X_REDUCE=40:0" \
  bash scripts/device/run-crossover.sh
# the two-shot against the ring where AUTO runs the ring
for v in "" 24 32 48; do
  PEERLINK_X_REDUCE=$v PEERLINK_ALGO=TWOSHOT timeout 60 dist/peerlink coll -o reduce -b 32M -e 256M -f 2 -c 0 --no-nccl --json $p/twoshot-$v.json > $p/twoshot-$v.txt 2>&1; echo "twoshot $v: $?"
done
timeout 60 dist/peerlink coll -o reduce -b 32M -e 256M -f 2 -c 0 --no-nccl --json $p/auto.json > $p/auto.txt 2>&1; echo "auto: $?"
save
