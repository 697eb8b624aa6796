#!/bin/bash
# One H200. First, without MPS, the communicator across 2 virtual nodes of one rank (COMM_PER_NODE=1: no kernel of
# the node before a phase across nodes, so only the stream-ordered calls depend on the new ordering), with this build
# and with the unordered one (dist/build-unordered: orderTransportAfter returning at once): the unordered build must
# fail exactly in the stream-ordered calls. Then under CUDA MPS the time of small calls, the build before the change
# (dist/build-3e383aa: 3e383aa's tree, the copies waiting for the host's wait for the stream) against this one
# (2acdbb9 + run-nodes.sh's COMM_PER_NODE: the copies ordered after the stream on the GPU), `peerlink coll` on 2
# virtual nodes of one rank, all seven collectives, 8 B - 16 MiB, three rounds each, interleaved, every cell checked.
# Pack: as call-a.sh (dist/build-3e383aa: the build before, its peerlink and libpeerlink_mpi.so, stripped, xz).
scripts/device/unpack-dist.sh
scripts/device/call.sh b-comm 'COMM_PER_NODE=1 run nodes-comm-1 200 scripts/device/run-nodes.sh comm'
status=$?
cp dist/mpi/mpi_comm_nodes_e2e /tmp/mpi_comm_nodes_e2e.ordered
cp dist/build-unordered/mpi_comm_nodes_e2e dist/mpi/mpi_comm_nodes_e2e
scripts/device/call.sh b-unordered 'COMM_PER_NODE=1 run nodes-comm-1-unordered 200 scripts/device/run-nodes.sh comm'
cp /tmp/mpi_comm_nodes_e2e.ordered dist/mpi/mpi_comm_nodes_e2e
common='COLL_SIZES=8:16M:4 COLL_TIMEOUT=150 COLL_PER_NODE=1'
collectives='all_reduce reduce_scatter all_gather all_to_all reduce broadcast send_recv'
steps=()
for round in 1 2 3; do
  steps+=("OUT=/tmp/call-b/before-$round COLL_BUILD=dist/build-3e383aa $common run before-$round 200 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-b/after-$round $common run after-$round 200 scripts/device/run-nodes.sh coll $collectives")
done
scripts/device/with-mps.sh scripts/device/call.sh b "${steps[@]}" || status=1
exit $status
