#!/bin/bash
# One H200: the last build (the async piece found in one place; sizes too large to capture not run). Without MPS the
# e2e on 2 x 1; under MPS peerlink coll all-reduce 64 KiB - 4 MiB across 2 virtual nodes of one rank: peerlink's graph
# configuration runs up to the async calls' size and leaves the larger sizes N/A with their reason, exit 0.
# Pack: scripts/device/pack-call.sh, then dist/mpi (libpeerlink_mpi.so, mpi_comm_nodes_e2e), stripped, xz.
scripts/device/unpack-dist.sh
scripts/device/call.sh f-checks 'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm'
status=$?
scripts/device/with-mps.sh scripts/device/call.sh f \
  "OUT=/tmp/call-f/coll COLL_SIZES=64K:4M:4 COLL_TIMEOUT=60 COLL_PER_NODE=1 run coll 90 scripts/device/run-nodes.sh coll all_reduce" || status=1
exit $status
