#!/bin/bash
# One H200: `peerlink coll` across 2 virtual nodes of one rank each (both on the one GPU), with NCCL split the same way
# in the same processes (NCCL_HOSTID per node: NCCL's socket transport over loopback between them), beside MPI's own
# point-to-point of the same bytes. Shows the machinery of issue 36's comparison; the ranks share the GPU.
# Pack: scripts/device/pack-call.sh (no tests), then build/libpeerlink_mpi.so into dist/mpi (stripped, xz).
scripts/device/call.sh b \
  'COLL_NCCL=1 COLL_PER_NODE=1 COLL_TIMEOUT=200 run nodes-coll 450 scripts/device/run-nodes.sh coll all_reduce all_gather'
cp "${OUT:-/tmp}/nodes-coll.tar.gz" /tmp/call-b/ 2>/dev/null
