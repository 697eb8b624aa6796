#!/bin/bash
# One H200, without MPS: the checks again on the session's final build (e058e40: a replayed call failed before its
# copies in leaves its copies out too): the GPU test, the e2e on 2 x 1 and 2 x 2, a killed rank, a stall before an
# async call, the transport's collectives; then under MPS the e2e on 2 x 1.
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so, mpi_comm_nodes_e2e,
# mpi_net_e2e), stripped, xz.
scripts/device/unpack-dist.sh
scripts/device/call.sh p-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' 'run nodes-comm 150 scripts/device/run-nodes.sh comm' \
  'run nodes-kill 40 scripts/device/run-nodes.sh kill' 'run nodes-stall-async 30 scripts/device/run-nodes.sh stall-async' \
  'run nodes-net 60 scripts/device/run-nodes.sh net'
status=$?
scripts/device/with-mps.sh scripts/device/call.sh p 'COMM_PER_NODE=1 run nodes-comm-mps 60 scripts/device/run-nodes.sh comm' || status=1
exit $status
