#!/bin/bash
# One H200: the replayed kernel reading its ticket, the release and the sets' words together (be740fe) against the
# build before (2bf2e29, as call c). Without MPS, the e2e on 2 x 1 and 2 x 2. Under MPS, 2 virtual nodes of one rank,
# peerlink coll 8 B - 128 KiB, six collectives, eager and in a graph, no NCCL (call c has it): two rounds of each
# build alternating; then this build with 200 timed iterations (one graph of 200 calls: the graph's start paid once).
# Pack: scripts/device/pack-call.sh, then dist/mpi (libpeerlink_mpi.so, mpi_comm_nodes_e2e) and dist/build-before
# (2bf2e29's peerlink and libpeerlink_mpi.so), stripped, xz.
scripts/device/unpack-dist.sh
scripts/device/call.sh d-checks 'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' \
  'run nodes-comm 90 scripts/device/run-nodes.sh comm'
status=$?
common='COLL_SIZES=8:128K:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
collectives='all_reduce broadcast reduce all_gather reduce_scatter send_recv'
steps=()
for round in 1 2; do
  steps+=("OUT=/tmp/call-d/after-$round $common run after-$round 90 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-d/before-$round COLL_BUILD=dist/build-before $common run before-$round 90 scripts/device/run-nodes.sh coll $collectives")
done
steps+=("OUT=/tmp/call-d/iters-200 COLL_ITERS=200 $common run iters-200 120 scripts/device/run-nodes.sh coll all_reduce broadcast send_recv")
scripts/device/with-mps.sh scripts/device/call.sh d "${steps[@]}" || status=1
exit $status
