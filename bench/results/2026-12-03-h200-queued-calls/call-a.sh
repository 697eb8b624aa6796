#!/bin/bash
# One H200: calls across nodes too large for an async call's kernel return once queued (the progress thread runs
# them, their copies after the caller's stream, the stream waiting for their release). Without MPS: the communicator
# across 2 virtual nodes x 2 and x 1 (every collective and send/recv of the API; ten all-reduces on two streams, small
# and 6 MiB, with the time they took to return), x 1 again with PEERLINK_NET_ASYNC=OFF (every call waits), the stalled
# streams before a queued, a waiting and an async call, a killed rank, the transport alone. Under MPS, 2 virtual nodes
# of one rank, all seven collectives 8 B - 16 MiB: two rounds each of PEERLINK_NET_ASYNC=OFF (sync) and ON (async),
# interleaved, then NCCL split the same way once.
# Pack: scripts/device/pack-call.sh (no tests); build/libpeerlink_mpi.so, build/tests/mpi/mpi_comm_nodes_e2e and
# mpi_net_e2e into dist/mpi (stripped, xz).
scripts/device/unpack-dist.sh
scripts/device/call.sh a-checks 'run nodes-comm 200 scripts/device/run-nodes.sh comm' \
  'COMM_PER_NODE=1 run nodes-comm-1 200 scripts/device/run-nodes.sh comm' \
  'COMM_PER_NODE=1 PEERLINK_NET_ASYNC=OFF run nodes-comm-1-sync 200 scripts/device/run-nodes.sh comm' \
  'run nodes-stall 100 scripts/device/run-nodes.sh stall' 'run nodes-stall-sync 100 scripts/device/run-nodes.sh stall-sync' \
  'run nodes-stall-async 100 scripts/device/run-nodes.sh stall-async' \
  'run nodes-kill 100 scripts/device/run-nodes.sh kill' 'run nodes-net 150 scripts/device/run-nodes.sh net'
status=$?
common='COLL_SIZES=8:16M:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
collectives='all_reduce reduce_scatter all_gather all_to_all reduce broadcast send_recv'
steps=()
for round in 1 2; do
  steps+=("OUT=/tmp/call-a/sync-$round PEERLINK_NET_ASYNC=OFF $common run sync-$round 120 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-a/async-$round $common run async-$round 120 scripts/device/run-nodes.sh coll $collectives")
done
steps+=("OUT=/tmp/call-a/nccl-1 COLL_NCCL=1 $common run nccl-1 200 scripts/device/run-nodes.sh coll $collectives")
scripts/device/with-mps.sh scripts/device/call.sh a "${steps[@]}" || status=1
exit $status
