#!/bin/bash
# One H200, without MPS: the checks on the session's last build (call b/c's rule, a failed launch breaking the world
# at once, the kernel's copies with 16 words in flight): the GPU test, the e2e's 112 calls on 2 x 1 and 2 x 2, a killed
# rank, a stalled stream before an async call, the transport's collectives.
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so and the two MPI e2e
# tests, stripped, xz).
scripts/device/unpack-dist.sh
scripts/device/call.sh e-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 60 scripts/device/run-nodes.sh comm' 'run nodes-comm 60 scripts/device/run-nodes.sh comm' \
  'run nodes-kill 40 scripts/device/run-nodes.sh kill' 'run nodes-stall-async 30 scripts/device/run-nodes.sh stall-async' \
  'run nodes-net 60 scripts/device/run-nodes.sh net'
