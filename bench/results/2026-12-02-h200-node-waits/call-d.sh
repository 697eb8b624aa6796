#!/bin/bash
# One H200, after the waits of a node world stopped sleeping, it kept its recent hierarchical plans, and setup read
# the settings of calls across processes through crossProcessSettingsFrom: the communicator across processes (ranks
# sharing the GPU), the staged suite (host staging, arena ring, staging windows in one process), the transport's
# copies (copySync waits with IdleWait now), and the communicator across 2 virtual nodes x 2 (every collective and
# send/recv of the public API against the closed forms, the same shapes repeated: the plans' cache).
# Pack: scripts/device/pack-call.sh gpu_test_communicator_processes gpu_test_communicator_staged gpu_test_gpu_transport,
# then build/libpeerlink_mpi.so and build/tests/mpi/mpi_comm_nodes_e2e into dist/mpi (stripped, xz); no CLI.
scripts/device/call.sh d \
  'PEERLINK_COLL_SHARE_GPUS=1 test processes 200 gpu_test_communicator_processes' \
  'PEERLINK_TIMEOUT_MS=30000 test staged 300 gpu_test_communicator_staged' \
  'test transport 120 gpu_test_gpu_transport' \
  'run nodes-comm 150 scripts/device/run-nodes.sh comm'
