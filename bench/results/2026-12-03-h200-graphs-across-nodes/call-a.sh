#!/bin/bash
# One H200, without MPS: calls across nodes captured into a CUDA graph (07e3cd0). The GPU test of the async kernel
# (now shared with the replayed one), the e2e on 2 x 1 and 2 x 2 virtual nodes (its captured graph: six calls run 12
# times between eager calls, 200 runs timed against the same calls eagerly, a 4 MiB call refused), a killed rank, a
# stalled stream before an async call, the transport's collectives.
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so and the two MPI e2e
# tests, stripped, xz).
scripts/device/unpack-dist.sh
scripts/device/call.sh a-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' 'run nodes-comm 90 scripts/device/run-nodes.sh comm' \
  'run nodes-kill 40 scripts/device/run-nodes.sh kill' 'run nodes-stall-async 30 scripts/device/run-nodes.sh stall-async' \
  'run nodes-net 60 scripts/device/run-nodes.sh net'
