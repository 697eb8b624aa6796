#!/bin/bash
# Reapplies f42be21's src/kernels/async_call.cu (the copy out's reductions load each address on its own, 16 bytes at
# a time where it allows, a barrier before them); run in call w (results in the README).
# One H200: the GPU test without MPS (its shapes with the own input
# off the boundary and in place), then under MPS the e2e on 2 x 1 (its graph and
# eager times beside call v's). The outputs: $OUT/call-w.tar.gz.
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so,
# mpi_comm_nodes_e2e), stripped, xz.
scripts/device/unpack-dist.sh
scripts/device/call.sh w-checks 'test gpu-net-staging 90 gpu_test_gpu_net_staging'
status=$?
scripts/device/with-mps.sh scripts/device/call.sh w 'COMM_PER_NODE=1 run nodes-comm-mps 60 scripts/device/run-nodes.sh comm' || status=1
exit $status
