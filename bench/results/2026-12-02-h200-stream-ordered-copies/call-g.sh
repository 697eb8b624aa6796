#!/bin/bash
# One H200: the async calls after the review (369c8e5: failed calls marked, abandoned calls, a kernel that gives up
# reported, small calls on two streams in the e2e test). Without MPS: the communicator across 2 virtual nodes x 2 and x 1 (every collective and
# send/recv of the API; pieces of 64 KiB), the stalled streams, a killed rank, the transport alone. Then under MPS,
# 2 virtual nodes of one rank, all seven collectives 8 B - 16 MiB, three rounds of this build with
# PEERLINK_NET_ASYNC=OFF (sync) and on (async), interleaved; then beside NCCL split the same way.
# Pack: scripts/device/pack-call.sh (no tests); build/libpeerlink_mpi.so, build/tests/mpi/mpi_comm_nodes_e2e and
# mpi_net_e2e into dist/mpi (stripped, xz).
scripts/device/unpack-dist.sh
scripts/device/call.sh g-checks 'run nodes-comm 200 scripts/device/run-nodes.sh comm' \
  'COMM_PER_NODE=1 run nodes-comm-1 200 scripts/device/run-nodes.sh comm' \
  'run nodes-stall 100 scripts/device/run-nodes.sh stall' 'run nodes-stall-async 100 scripts/device/run-nodes.sh stall-async' \
  'run nodes-kill 100 scripts/device/run-nodes.sh kill' 'run nodes-net 150 scripts/device/run-nodes.sh net'
status=$?
common='COLL_SIZES=8:16M:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
collectives='all_reduce reduce_scatter all_gather all_to_all reduce broadcast send_recv'
steps=()
for round in 1 2 3; do
  steps+=("OUT=/tmp/call-g/sync-$round PEERLINK_NET_ASYNC=OFF $common run sync-$round 120 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-g/async-$round $common run async-$round 120 scripts/device/run-nodes.sh coll $collectives")
done
steps+=("OUT=/tmp/call-g/nccl-1 COLL_NCCL=1 $common run nccl-1 300 scripts/device/run-nodes.sh coll $collectives")
scripts/device/with-mps.sh scripts/device/call.sh g "${steps[@]}" || status=1
exit $status
