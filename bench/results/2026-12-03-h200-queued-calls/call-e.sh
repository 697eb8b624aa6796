#!/bin/bash
# One H200, build 247ae39: the review's fixes after call d (937f9f9: a queued call behind a failed one released, pinned
# memory kept from a break, the staged path's lane tags, no CUDA call on the progress thread; the `stall` step now
# expects "did not reach the call's copies"). Quick checks without MPS (a killed rank, the communicator across 2
# virtual nodes x 1 and x 2, stalled streams before a queued, a waiting and an async call, the transport alone), then
# under MPS, 2 virtual nodes of one rank, all seven collectives 8 B - 16 MiB: two rounds each of PEERLINK_NET_ASYNC=OFF
# (sync) and ON (async), interleaved, then NCCL split the same way once (the rule of which calls are queued,
# `queuedFits`, timed for the first time).
# Pack: as call-c.sh.
scripts/device/unpack-dist.sh
scripts/device/call.sh e-checks 'run nodes-kill 40 scripts/device/run-nodes.sh kill' \
  'COMM_PER_NODE=1 run nodes-comm-1 60 scripts/device/run-nodes.sh comm' 'run nodes-comm 60 scripts/device/run-nodes.sh comm' \
  'run nodes-stall 30 scripts/device/run-nodes.sh stall' 'run nodes-stall-sync 30 scripts/device/run-nodes.sh stall-sync' \
  'run nodes-stall-async 30 scripts/device/run-nodes.sh stall-async' 'run nodes-net 60 scripts/device/run-nodes.sh net'
status=$?
common='COLL_SIZES=8:16M:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
collectives='all_reduce reduce_scatter all_gather all_to_all reduce broadcast send_recv'
steps=()
for round in 1 2; do
  steps+=("OUT=/tmp/call-e/sync-$round PEERLINK_NET_ASYNC=OFF $common run sync-$round 60 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-e/async-$round $common run async-$round 60 scripts/device/run-nodes.sh coll $collectives")
done
steps+=("OUT=/tmp/call-e/nccl-1 COLL_NCCL=1 $common run nccl-1 60 scripts/device/run-nodes.sh coll $collectives")
scripts/device/with-mps.sh scripts/device/call.sh e "${steps[@]}" || status=1
exit $status
