#!/bin/bash
# One H200: calls across nodes in CUDA graphs started by one host function at the graph's root (2bf2e29). Without
# MPS, the checks: the GPU test of the async kernel, the e2e on 2 x 1 and 2 x 2 (its graph of six calls run 12 times
# between eager calls, a 4 MiB call refused), a stalled stream before an async call. Under MPS, 2 virtual nodes of one
# rank: peerlink coll 8 B - 128 KiB, six collectives, peerlink eager and in a graph, NCCL split the same way (eager
# and graph) in the first round, a second round without NCCL; the e2e on 2 x 1 (its graph timed against the same
# calls eagerly).
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so and the two MPI e2e
# tests, stripped, xz).
scripts/device/unpack-dist.sh
scripts/device/call.sh c-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' 'run nodes-comm 90 scripts/device/run-nodes.sh comm' \
  'run nodes-stall-async 30 scripts/device/run-nodes.sh stall-async'
status=$?
common='COLL_SIZES=8:128K:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
collectives='all_reduce broadcast reduce all_gather reduce_scatter send_recv'
steps=("OUT=/tmp/call-c/nccl-1 COLL_NCCL=1 $common run nccl-1 150 scripts/device/run-nodes.sh coll $collectives"
  "OUT=/tmp/call-c/plain-2 $common run plain-2 120 scripts/device/run-nodes.sh coll $collectives"
  'COMM_PER_NODE=1 run nodes-comm-mps 90 scripts/device/run-nodes.sh comm')
scripts/device/with-mps.sh scripts/device/call.sh c "${steps[@]}" || status=1
exit $status
