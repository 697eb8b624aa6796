#!/bin/bash
# Prepared, not run (the session's device time was spent). One H200 under MPS, 2 virtual nodes of one rank
# (a2647808: calls that return once queued count in the time across nodes again): peerlink coll all-reduce and
# all-gather 512 KiB - 32 MiB, its table across nodes (peerlink's phases across nodes against MPI's own point-to-point
# of the same bytes) filled where it was N/A since calls stopped waiting; then the checks on 566f026 (a captured call's
# pieces cut by one helper and moved into their job once): the GPU test, the e2e on 2 x 1 under MPS. The outputs:
# $OUT/call-q.tar.gz.
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so,
# mpi_comm_nodes_e2e), stripped, xz.
scripts/device/unpack-dist.sh
scripts/device/with-mps.sh scripts/device/call.sh q \
  "OUT=/tmp/call-q/ar COLL_SIZES=512K:32M:4 COLL_TIMEOUT=60 COLL_PER_NODE=1 run ar 70 scripts/device/run-nodes.sh coll all_reduce" \
  "OUT=/tmp/call-q/ag COLL_SIZES=512K:32M:4 COLL_TIMEOUT=60 COLL_PER_NODE=1 run ag 70 scripts/device/run-nodes.sh coll all_gather" \
  "test gpu-net-staging 60 gpu_test_gpu_net_staging" \
  "COMM_PER_NODE=1 run nodes-comm-mps 60 scripts/device/run-nodes.sh comm"
