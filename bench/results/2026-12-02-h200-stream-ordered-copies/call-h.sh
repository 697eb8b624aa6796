#!/bin/bash
# One H200: the session's last build (a8e31fe: a collective's async plan built once, the node's health checked before
# a ticket is taken). Without MPS: the communicator across 2 virtual nodes x 2 and x 1, the stalled streams, a killed
# rank, the transport alone. Under MPS: two rounds each of sync (PEERLINK_NET_ASYNC=OFF) and async, 2 virtual nodes of
# one rank, all seven collectives 8 B - 16 MiB.
# Pack: as call-f.sh.
scripts/device/unpack-dist.sh
scripts/device/call.sh h-checks 'run nodes-comm 200 scripts/device/run-nodes.sh comm' \
  'COMM_PER_NODE=1 run nodes-comm-1 200 scripts/device/run-nodes.sh comm' \
  'run nodes-stall 100 scripts/device/run-nodes.sh stall' 'run nodes-stall-async 100 scripts/device/run-nodes.sh stall-async' \
  'run nodes-kill 100 scripts/device/run-nodes.sh kill' 'run nodes-net 150 scripts/device/run-nodes.sh net'
status=$?
common='COLL_SIZES=8:16M:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
collectives='all_reduce reduce_scatter all_gather all_to_all reduce broadcast send_recv'
steps=()
for round in 1 2; do
  steps+=("OUT=/tmp/call-h/sync-$round PEERLINK_NET_ASYNC=OFF $common run sync-$round 120 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-h/async-$round $common run async-$round 120 scripts/device/run-nodes.sh coll $collectives")
done
scripts/device/with-mps.sh scripts/device/call.sh h "${steps[@]}" || status=1
exit $status
