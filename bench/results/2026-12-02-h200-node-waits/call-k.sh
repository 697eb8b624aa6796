#!/bin/bash
# One H200, the last build: the transport's copies on a GPU (CudaDeviceAccess, now a class of its own with
# orderAfterCopies) where calls still wait for their copies out -- its GPU tests, and the transport alone through MPI on
# GPU memory over 2 virtual nodes x 2 (every hierarchical collective against the closed forms).
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging (no CLI); build/libpeerlink_mpi.so and
# build/tests/mpi/mpi_net_e2e into dist/mpi (stripped, xz).
scripts/device/call.sh k 'test net-staging 200 gpu_test_gpu_net_staging' 'run nodes-net 200 scripts/device/run-nodes.sh net'
