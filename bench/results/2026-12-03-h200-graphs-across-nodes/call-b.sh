#!/bin/bash
# One H200 under MPS, 2 virtual nodes of one rank: peerlink coll, 8 B - 128 KiB, six collectives, peerlink eager and
# in a CUDA graph (calls captured across nodes, 69239ea), NCCL split the same way (eager and graph) in the
# first round; a second round without NCCL; then the e2e on 2 x 1 (its graph of six calls timed against the same
# calls eagerly).
# Pack: scripts/device/pack-call.sh, then dist/mpi (libpeerlink_mpi.so and mpi_comm_nodes_e2e, stripped, xz).
scripts/device/unpack-dist.sh
common='COLL_SIZES=8:128K:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
collectives='all_reduce broadcast reduce all_gather reduce_scatter send_recv'
steps=("OUT=/tmp/call-b/nccl-1 COLL_NCCL=1 $common run nccl-1 150 scripts/device/run-nodes.sh coll $collectives"
  "OUT=/tmp/call-b/plain-2 $common run plain-2 120 scripts/device/run-nodes.sh coll $collectives"
  'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm')
scripts/device/with-mps.sh scripts/device/call.sh b "${steps[@]}"
