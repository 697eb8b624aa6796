#!/bin/bash
# One H200: a queued call's copies and reductions made on the GPU (queued_computations.hpp: a kernel per computation
# queued at the call on the copy stream, each behind a wait for the transport's ticket), so calls the staged path
# reduces on the GPU are queued too. Checks without MPS (the communicator across 2 virtual nodes x 1 and x 2, whose
# e2e runs with PEERLINK_NET_REDUCE=GPU: every reducing call of it queued with its computations on the GPU, and the
# same with every call waiting; a killed rank; the stalled streams; the transport alone; the GPU test of the staged
# path's memory, with the kernels queued before their arguments), then under MPS, 2 virtual
# nodes of one rank, all seven collectives 8 B - 32 MiB: two rounds each of PEERLINK_NET_ASYNC=OFF (sync) and ON
# (async), interleaved, then NCCL split the same way once.
# Pack: as call-c.sh, and build/tests/gpu_test_gpu_net_staging (stripped) alone in dist/xz/tests.tar.xz.
scripts/device/unpack-dist.sh
scripts/device/call.sh f-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' 'COMM_PER_NODE=1 run nodes-comm-1 60 scripts/device/run-nodes.sh comm' \
  'COMM_PER_NODE=1 PEERLINK_NET_ASYNC=OFF run nodes-comm-1-sync 60 scripts/device/run-nodes.sh comm' \
  'run nodes-comm 60 scripts/device/run-nodes.sh comm' 'run nodes-kill 40 scripts/device/run-nodes.sh kill' \
  'run nodes-stall 30 scripts/device/run-nodes.sh stall' 'run nodes-stall-sync 30 scripts/device/run-nodes.sh stall-sync' \
  'run nodes-stall-async 30 scripts/device/run-nodes.sh stall-async' 'run nodes-net 60 scripts/device/run-nodes.sh net'
status=$?
common='COLL_SIZES=8:32M:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
collectives='all_reduce reduce_scatter all_gather all_to_all reduce broadcast send_recv'
steps=()
for round in 1 2; do
  steps+=("OUT=/tmp/call-f/sync-$round PEERLINK_NET_ASYNC=OFF $common run sync-$round 60 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-f/async-$round $common run async-$round 60 scripts/device/run-nodes.sh coll $collectives")
done
steps+=("OUT=/tmp/call-f/nccl-1 COLL_NCCL=1 $common run nccl-1 90 scripts/device/run-nodes.sh coll $collectives")
scripts/device/with-mps.sh scripts/device/call.sh f "${steps[@]}" || status=1
exit $status
