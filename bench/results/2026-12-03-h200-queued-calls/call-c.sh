#!/bin/bash
# One H200: call a again with the queued calls redone (every GPU operation of a queued call queued at the call, the
# progress thread making no CUDA call; host reductions). As call a otherwise (checks, then sync against async under
# MPS, NCCL once); the e2e steps limited to 100 s.
# Pack: scripts/device/pack-call.sh (no tests); build/libpeerlink_mpi.so, build/tests/mpi/mpi_comm_nodes_e2e and
# mpi_net_e2e into dist/mpi (stripped, xz).
scripts/device/unpack-dist.sh
scripts/device/call.sh c-checks 'run nodes-comm 100 scripts/device/run-nodes.sh comm' \
  'COMM_PER_NODE=1 run nodes-comm-1 100 scripts/device/run-nodes.sh comm' \
  'COMM_PER_NODE=1 PEERLINK_NET_ASYNC=OFF run nodes-comm-1-sync 100 scripts/device/run-nodes.sh comm' \
  'run nodes-stall 100 scripts/device/run-nodes.sh stall' 'run nodes-stall-sync 100 scripts/device/run-nodes.sh stall-sync' \
  'run nodes-stall-async 100 scripts/device/run-nodes.sh stall-async' \
  'run nodes-kill 100 scripts/device/run-nodes.sh kill' 'run nodes-net 150 scripts/device/run-nodes.sh net'
status=$?
common='COLL_SIZES=8:16M:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
collectives='all_reduce reduce_scatter all_gather all_to_all reduce broadcast send_recv'
steps=()
for round in 1 2; do
  steps+=("OUT=/tmp/call-c/sync-$round PEERLINK_NET_ASYNC=OFF $common run sync-$round 120 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-c/async-$round $common run async-$round 120 scripts/device/run-nodes.sh coll $collectives")
done
steps+=("OUT=/tmp/call-c/nccl-1 COLL_NCCL=1 $common run nccl-1 200 scripts/device/run-nodes.sh coll $collectives")
scripts/device/with-mps.sh scripts/device/call.sh c "${steps[@]}" || status=1
exit $status
