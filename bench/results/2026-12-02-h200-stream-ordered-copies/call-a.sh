#!/bin/bash
# One H200: the transport's copies out of the caller's memory ordered after the caller's stream on the GPU (2acdbb9).
# The communicator across 2 virtual nodes x 2 (every collective and send/recv of the API, and the new calls whose
# data the stream writes behind a 30 ms host function and reads after); a rank's stream stalled past the transport's
# deadline (2 nodes of one rank); a rank killed. Then the same comm run with a build whose node world orders nothing
# (dist/build-unordered, made from 5b159aa with orderTransportAfter returning at once): its stream-ordered calls
# must fail, or the test could not catch the fault.
# Pack: scripts/device/pack-call.sh (no tests); build/libpeerlink_mpi.so, build/tests/mpi/mpi_comm_nodes_e2e and
# mpi_net_e2e into dist/mpi, the unordered mpi_comm_nodes_e2e into dist/build-unordered (stripped, xz).
scripts/device/unpack-dist.sh
scripts/device/call.sh a 'run nodes-comm 200 scripts/device/run-nodes.sh comm' \
  'run nodes-stall 100 scripts/device/run-nodes.sh stall' 'run nodes-kill 100 scripts/device/run-nodes.sh kill'
status=$?
cp dist/build-unordered/mpi_comm_nodes_e2e dist/mpi/mpi_comm_nodes_e2e
scripts/device/call.sh a-unordered 'run nodes-comm-unordered 200 scripts/device/run-nodes.sh comm'
exit $status
