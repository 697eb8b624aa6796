#!/bin/bash
# scripts/device/with-mps.sh around a call: `peerlink coll` all-reduce across 2 virtual nodes of one rank on the one
# H200, 8 B - 8 KiB (small calls cost tens of us under MPS, hundreds without), and the daemon's own list of servers.
# Pack: scripts/device/pack-call.sh (no tests); build/libpeerlink_mpi.so into dist/mpi (stripped, xz).
scripts/device/with-mps.sh scripts/device/call.sh l \
  'OUT=/tmp/call-l/after-1 COLL_SIZES=8:8K:4 COLL_PER_NODE=1 COLL_TIMEOUT=100 run after-1 150 scripts/device/run-nodes.sh coll all_reduce'
