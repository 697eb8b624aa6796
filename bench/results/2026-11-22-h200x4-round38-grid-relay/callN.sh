# Session 9 call N (main): the two-shot grids. Reduce, broadcast and all-reduce from 2 to 128 MiB under
# PEERLINK_COLL_MAX_BLOCKS 8/16/33/66 against the defaults (one block per SM) and NCCL in the same run
source scripts/device/call-lib.sh n
COLL_LIST="reduce broadcast all_reduce" CROSS_MIN=2M CROSS_MAX=128M \
  CROSS_VARIANTS="PEERLINK_COLL_MAX_BLOCKS=8 PEERLINK_COLL_MAX_BLOCKS=16 PEERLINK_COLL_MAX_BLOCKS=33 PEERLINK_COLL_MAX_BLOCKS=66" \
  bash scripts/device/run-crossover.sh
