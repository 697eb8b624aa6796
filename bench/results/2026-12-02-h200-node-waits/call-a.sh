#!/bin/bash
# One H200: `peerlink coll` across 2 virtual nodes of one rank each (both on the one GPU), small sizes, the build
# before the waits of a node world stopped sleeping (33e44d1, carried as dist/build-33e44d1) and after, twice each,
# interleaved. The ranks share the GPU, so the times are not a two-GPU machine's; what is compared is the same
# configuration before and after the change, in one run.
# Pack: scripts/device/pack-call.sh (no tests); build/libpeerlink_mpi.so into dist/mpi (stripped, xz); the old build's
# peerlink and libpeerlink_mpi.so into dist/build-33e44d1 (stripped, xz).
common='COLL_SIZES=8:1M:4 COLL_PER_NODE=1 COLL_TIMEOUT=100'
steps=()
for round in 1 2; do
  steps+=("OUT=/tmp/call-a/before-$round COLL_BUILD=dist/build-33e44d1 $common run before-$round 330 scripts/device/run-nodes.sh coll all_reduce reduce_scatter all_gather")
  steps+=("OUT=/tmp/call-a/after-$round $common run after-$round 330 scripts/device/run-nodes.sh coll all_reduce reduce_scatter all_gather")
done
scripts/device/call.sh a "${steps[@]}"
