#!/bin/bash
# One H200 under CUDA MPS: call b's small calls again with more rounds (eight of each build, interleaved, 8 B - 8 KiB,
# all seven collectives, 2 virtual nodes of one rank, every cell checked), then this build beside NCCL split into the
# same two virtual nodes in the same processes (COLL_NCCL=1: NCCL_HOSTID per node, its socket transport on loopback),
# 8 B - 16 MiB: NCCL refuses two ranks of one host on one GPU, but not two hosts.
# Pack: as call-b.sh.
scripts/device/unpack-dist.sh
common='COLL_TIMEOUT=60 COLL_PER_NODE=1'
collectives='all_reduce reduce_scatter all_gather all_to_all reduce broadcast send_recv'
steps=()
for round in 1 2 3 4 5 6 7 8; do
  steps+=("OUT=/tmp/call-c/before-$round COLL_BUILD=dist/build-3e383aa COLL_SIZES=8:8K:4 $common run before-$round 120 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-c/after-$round COLL_SIZES=8:8K:4 $common run after-$round 120 scripts/device/run-nodes.sh coll $collectives")
done
steps+=("OUT=/tmp/call-c/nccl-1 COLL_NCCL=1 COLL_SIZES=8:16M:4 $common run nccl-1 300 scripts/device/run-nodes.sh coll $collectives")
scripts/device/with-mps.sh scripts/device/call.sh c "${steps[@]}"
