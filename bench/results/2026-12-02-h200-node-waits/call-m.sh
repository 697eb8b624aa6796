#!/bin/bash
# One H200, after the review moved the wait for copies left queued into StagingSlots::reserve: the communicator across
# 2 virtual nodes x 2 (every collective and send/recv of the API against the closed forms, copies out in stream order)
# and the transport alone through MPI on GPU memory (108 hierarchical collectives).
# Pack: build/libpeerlink_mpi.so, build/tests/mpi/mpi_comm_nodes_e2e and mpi_net_e2e into dist/mpi (stripped, xz).
scripts/device/call.sh m 'run nodes-comm 150 scripts/device/run-nodes.sh comm' 'run nodes-net 150 scripts/device/run-nodes.sh net'
