#!/usr/bin/env bash
# Across nodes on one GPU machine: 4 MPI ranks as 2 virtual nodes x 2 (PEERLINK_HOSTID from the rank), rank r on
# GPU r modulo the GPUs seen (ranks share GPUs where there are fewer). Run from the repository root with ./dist
# carried: scripts/device/pack-call.sh, then build/tests/mpi/mpi_net_e2e, build/tests/mpi/mpi_comm_nodes_e2e and
# build/libpeerlink_mpi.so copied into dist/mpi/ (stripped; NAME.xz is unpacked here, to stay under the carry
# limit). The GPU machines' Open MPI is not CUDA-aware and has no UCX, hence ob1 over shared memory and TCP.
#   net    the transport alone on GPU memory: every hierarchical collective through the staged path
#   comm   a Communicator across the two nodes: every collective and send/recv of the public API (tests/mpi/
#          comm_nodes_e2e.cc), against the closed forms
#   kill   the same communicator with rank 3 killed before an all-reduce: ranks 0-2 must name it
# usage: scripts/device/run-nodes.sh net|comm|kill
set -uo pipefail
mode=${1:?usage: scripts/device/run-nodes.sh net|comm|kill}
out=$(mktemp -d)
for packed in dist/mpi/*.xz; do
  [ -e "$packed" ] || continue
  [ -e "${packed%.xz}" ] || { xz -dc "$packed" >"${packed%.xz}" && chmod +x "${packed%.xz}"; }
done
export PEERLINK_MPI_LIBRARY=$PWD/dist/mpi/libpeerlink_mpi.so PEERLINK_NET_CHUNK_BYTES=65536 \
  PEERLINK_COLL_SHARE_GPUS=1 PEERLINK_NET_TIMEOUT_MS=60000 PEERLINK_TIMEOUT_MS=60000
flags=(--allow-run-as-root --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader,tcp
       -x PEERLINK_MPI_LIBRARY -x PEERLINK_NET_CHUNK_BYTES -x PEERLINK_COLL_SHARE_GPUS -x PEERLINK_NET_TIMEOUT_MS
       -x PEERLINK_TIMEOUT_MS)
case $mode in
  net | comm)
    program=$PWD/dist/mpi/mpi_net_e2e
    args=(gpu-collectives "$out")
    if [ "$mode" = comm ]; then
      program=$PWD/dist/mpi/mpi_comm_nodes_e2e
      args=(collectives "$out" 2)
    fi
    mpirun "${flags[@]}" -np 4 sh -c 'PEERLINK_HOSTID=node$((OMPI_COMM_WORLD_RANK / 2)) exec "$@"' sh \
      "$program" "${args[@]}"
    status=$?
    cat "$out"/rank*.txt 2>/dev/null
    exit $status
    ;;
  kill)
    export PEERLINK_NET_TIMEOUT_MS=20000 PEERLINK_TIMEOUT_MS=20000
    exec tests/mpi/comm_nodes_kill.sh "$(command -v mpirun)" "$PWD/dist/mpi/mpi_comm_nodes_e2e" "$out" "${flags[@]}"
    ;;
  *)
    echo "run-nodes.sh: unknown mode '$mode' (net, comm, kill)" >&2
    exit 2
    ;;
esac
