#!/bin/bash
# One H200 under MPS, 2 virtual nodes of one rank (call i's dist carried again): peerlink coll all-reduce 512 KiB -
# 32 MiB of the commit before the change (ed79657, dist/build-ed79657), and all-gather 512 KiB - 32 MiB of both
# builds, NCCL split the same way in the change's run.
scripts/device/unpack-dist.sh
scripts/device/with-mps.sh scripts/device/call.sh j \
  "OUT=/tmp/call-j/ar-before COLL_BUILD=dist/build-ed79657 COLL_SIZES=512K:32M:4 COLL_TIMEOUT=110 COLL_PER_NODE=1 run ar-before 130 scripts/device/run-nodes.sh coll all_reduce" \
  "OUT=/tmp/call-j/ag COLL_SIZES=512K:32M:4 COLL_TIMEOUT=130 COLL_PER_NODE=1 COLL_NCCL=1 run ag 150 scripts/device/run-nodes.sh coll all_gather" \
  "OUT=/tmp/call-j/ag-before COLL_BUILD=dist/build-ed79657 COLL_SIZES=512K:32M:4 COLL_TIMEOUT=110 COLL_PER_NODE=1 run ag-before 130 scripts/device/run-nodes.sh coll all_gather"
