#!/bin/bash
# One H200: async calls across nodes by one kernel (b5d0030: a communicator's small staged calls return once queued;
# the kernel copies in, waits on the GPU for the transport's release, copies out). Without MPS: the communicator across 2
# virtual nodes x 2 and x 1 (every collective and send/recv of the API; pieces of 64 KiB, so the calls up to 64 KiB a
# block run async and the larger ones wait on the host), the stalled stream before a 1 MiB call and before an async
# 4 KiB call, a killed rank, and the transport alone (108 collectives). Then under MPS, 2 virtual nodes of one rank,
# all seven collectives 8 B - 16 MiB, three rounds of: the build before (3e383aa), this build with
# PEERLINK_NET_ASYNC=OFF (sync), and this build (async); then this build beside NCCL split the same way.
# Pack: as call-b.sh (dist/mpi from b5d0030's build).
scripts/device/unpack-dist.sh
scripts/device/call.sh e-checks 'run nodes-comm 200 scripts/device/run-nodes.sh comm' \
  'COMM_PER_NODE=1 run nodes-comm-1 200 scripts/device/run-nodes.sh comm' \
  'run nodes-stall 100 scripts/device/run-nodes.sh stall' 'run nodes-stall-async 100 scripts/device/run-nodes.sh stall-async' \
  'run nodes-kill 100 scripts/device/run-nodes.sh kill' 'run nodes-net 150 scripts/device/run-nodes.sh net'
status=$?
common='COLL_SIZES=8:16M:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
collectives='all_reduce reduce_scatter all_gather all_to_all reduce broadcast send_recv'
steps=()
for round in 1 2 3; do
  steps+=("OUT=/tmp/call-e/before-$round COLL_BUILD=dist/build-3e383aa $common run before-$round 120 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-e/sync-$round PEERLINK_NET_ASYNC=OFF $common run sync-$round 120 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-e/async-$round $common run async-$round 120 scripts/device/run-nodes.sh coll $collectives")
done
steps+=("OUT=/tmp/call-e/nccl-1 COLL_NCCL=1 $common run nccl-1 300 scripts/device/run-nodes.sh coll $collectives")
scripts/device/with-mps.sh scripts/device/call.sh e "${steps[@]}" || status=1
exit $status
