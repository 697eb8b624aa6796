#!/usr/bin/env bash
# The transport between nodes on GPU memory, on one GPU machine: 4 ranks as 2 virtual nodes x 2
# (PEERLINK_HOSTID from the rank), every hierarchical collective through the staged path (cudaMemcpyAsync to
# pinned host slots, MPI between them), checked against the closed forms. Rank r uses GPU r modulo the GPUs
# seen. Run from the repository root with ./dist carried (scripts/device/pack-call.sh, then copy
# build/tests/mpi/mpi_net_e2e and build/libpeerlink_mpi.so into dist/mpi/); the GPU machines' Open MPI is not
# CUDA-aware and has no UCX, hence ob1 over shared memory and TCP.
# usage: scripts/device/run-net-e2e.sh [RANKS]        (RANKS: 4 unless given; even)
set -euo pipefail
ranks=${1:-4}
out=$(mktemp -d)
export PEERLINK_MPI_LIBRARY=$PWD/dist/mpi/libpeerlink_mpi.so PEERLINK_NET_CHUNK_BYTES=65536 PEERLINK_NET_TIMEOUT_MS=60000
exec mpirun --allow-run-as-root --oversubscribe -np "$ranks" --bind-to none --mca pml ob1 --mca btl self,vader,tcp \
  -x PEERLINK_MPI_LIBRARY -x PEERLINK_NET_CHUNK_BYTES -x PEERLINK_NET_TIMEOUT_MS \
  sh -c 'PEERLINK_HOSTID=node$((OMPI_COMM_WORLD_RANK / 2)) exec "$0" gpu-collectives "$1"' \
  "$PWD/dist/mpi/mpi_net_e2e" "$out"
