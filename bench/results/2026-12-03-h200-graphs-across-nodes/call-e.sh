#!/bin/bash
# One H200: the session's last build (75e14b1, after the review). Without MPS, the checks: the GPU test of the async
# kernel, the e2e on 2 x 1 and 2 x 2 (its graph of six calls run 12 times between eager calls, a 4 MiB call refused),
# a killed rank, a stalled stream before an async call, the transport's collectives. Under MPS, 2 virtual nodes of one
# rank: peerlink coll 8 B - 128 KiB, six collectives, eager and in a graph, NCCL split the same way (eager and graph),
# two rounds; the e2e on 2 x 1 (its graph timed against the same calls made eagerly before the capture).
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so and the two MPI e2e
# tests, stripped, xz).
scripts/device/unpack-dist.sh
scripts/device/call.sh e-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' 'run nodes-comm 90 scripts/device/run-nodes.sh comm' \
  'run nodes-kill 40 scripts/device/run-nodes.sh kill' 'run nodes-stall-async 30 scripts/device/run-nodes.sh stall-async' \
  'run nodes-net 60 scripts/device/run-nodes.sh net'
status=$?
common='COLL_SIZES=8:128K:4 COLL_TIMEOUT=60 COLL_PER_NODE=1 COLL_NCCL=1'
collectives='all_reduce broadcast reduce all_gather reduce_scatter send_recv'
steps=()
for round in 1 2; do
  steps+=("OUT=/tmp/call-e/nccl-$round $common run nccl-$round 150 scripts/device/run-nodes.sh coll $collectives")
done
steps+=('COMM_PER_NODE=1 run nodes-comm-mps 90 scripts/device/run-nodes.sh comm')
scripts/device/with-mps.sh scripts/device/call.sh e "${steps[@]}" || status=1
exit $status
