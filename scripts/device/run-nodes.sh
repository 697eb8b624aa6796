#!/usr/bin/env bash
# Across nodes on one GPU machine: 4 MPI ranks as 2 virtual nodes x 2 (PEERLINK_HOSTID from the rank), rank r on
# GPU r modulo the GPUs seen (ranks share GPUs where there are fewer). Run from the repository root with ./dist
# carried: scripts/device/pack-call.sh, then build/tests/mpi/mpi_net_e2e, build/tests/mpi/mpi_comm_nodes_e2e and
# build/libpeerlink_mpi.so copied into dist/mpi/ (stripped; NAME.xz is unpacked here, to stay under the carry
# limit). The GPU machines' Open MPI is not CUDA-aware and has no UCX, hence ob1 over shared memory and TCP.
#   net    the transport alone on GPU memory: every hierarchical collective through the staged path
#   comm   a Communicator across the two nodes: every collective and send/recv of the public API (tests/mpi/
#          comm_nodes_e2e.cc), against the closed forms. COMM_PER_NODE=1: 2 nodes of one rank (default 2 x 2)
#   kill   the same communicator with rank 3 killed before an all-reduce: ranks 0-2 must name it
#   stall  2 nodes of one rank, rank 1's stream held past the transport's deadline before a 1 MiB all-reduce (a
#          queued call, the host reducing): rank 1's checkHealth must say its stream did not reach the call's copies,
#          rank 0 name rank 1, both within twice the deadline
#   stall-sync  the same with PEERLINK_NET_ASYNC=OFF (the call waits on the host, and fails itself saying its
#          stream's work did not finish)
#   stall-async  the same before a 4 KiB all-reduce (an async call's kernel, which returns at once): as stall
#   coll   `peerlink coll` (dist/peerlink) under mpirun as the same 2 nodes x 2, for each collective named (default:
#          all seven): every size checked on the host, and beside peerlink's phases across nodes MPI's own
#          MPI_Isend/MPI_Irecv of the same bytes on the same path, timed in the same run (docs/multinode.md). The
#          pipeline's piece is the default 4 MiB. --no-nccl, unless COLL_NCCL=1: then NCCL too, in the same
#          processes, split the same way (NCCL_HOSTID as PEERLINK_HOSTID: its socket transport on loopback between
#          the virtual nodes, NCCL_SOCKET_IFNAME=lo); NCCL refuses two ranks of one host on one GPU, so with fewer
#          GPUs than ranks a node only COLL_PER_NODE=1. Needs only dist/peerlink and dist/mpi/libpeerlink_mpi.so. Each run's text and JSON go
#          to ${OUT:-/tmp}/nodes-coll.tar.gz; the summary at the end is each run's exit status, its checks and its
#          section across nodes. COLL_TIMEOUT: each run's limit in seconds (240). COLL_PER_NODE: ranks a node (2;
#          1 puts the two nodes on two GPUs of their own where the machine has 2). COLL_BUILD=DIR: DIR/peerlink and
#          DIR/libpeerlink_mpi.so instead of dist's (another build carried beside, e.g. the commit before a change,
#          as dist/build-ID/NAME.xz files unpack), its outputs in nodes-coll-$(basename DIR).tar.gz.
#          COLL_SIZES=B:E:F: coll's -b B -e E -f F for every collective (default 1K:64M:8; all-reduce 8:512M:4).
#          COLL_CHUNK_BYTES: PEERLINK_NET_CHUNK_BYTES of the runs (default 4194304, the library's). COLL_ITERS: coll's
#          -n, the timed iterations (default 20; a graph configuration captures them all in one graph).
#   bench  the transport alone on the machine's host memory, no GPU (dist/mpi/mpi_net_bench, from
#          build/tests/mpi/mpi_net_bench like the others): 2 ranks as 2 nodes, all-reduce, all-gather and reduce-scatter
#          1-64 MiB, direct and staged (pinned-memory pieces, their copies on a thread standing in for the copy
#          engine), each beside MPI's own exchange of the same bytes; then the staged run again with Open MPI's single
#          copy (CMA) off. Says how far the host side of the transport is from MPI on this machine, and whether its
#          shared memory moves large messages by CMA or in fragments (MPI's own GB/s differ between the two runs when
#          CMA works). Then the transport alone on GPU memory (--memory gpu: the communicator's staged path, copies by
#          the GPU's copy engine; rank r on GPU r modulo the GPUs), its reductions where PEERLINK_NET_REDUCE=AUTO puts
#          them (the GPU, but the host for a call of one piece under 2 MiB a reduction), then all on the GPU (GPU),
#          then all on the host (HOST), each beside MPI's own exchange of the same bytes of pinned host memory: AUTO
#          should match the better of the two at every size. BENCH_SIZES: the host runs' sizes (default
#          "-b 1M -e 64M -f 4").
#   gpu-bench [N ...]  only that last part (GPU memory, AUTO, GPU, HOST), on N processes as N nodes each (default 2):
#          a ring over more nodes reduces smaller pieces (a chunk / N), which is what AUTO's rule must hold for.
#          GPU_BENCH_REDUCE: the settings (default "AUTO GPU HOST"); GPU_BENCH_SIZES: mpi_net_bench's sizes
#          (default "-b 1M -e 64M -f 4").
#          To re-measure the transport between nodes on a GPU machine after a change to src/net/: bench, then
#          `coll all_reduce all_gather reduce_scatter`, and compare their ratios with the last run's.
# PEERLINK_NET_REDUCE goes to every rank: GPU reduces every staged piece on the GPU, HOST on the host's CPU on the
# transport's thread, AUTO on the GPU but for a call of one piece under 2 MiB a reduction. net, comm and kill cut calls
# into pieces of 64 KiB, whose calls of one piece AUTO would give the host, so they default to GPU (the kernels are
# what needs a GPU to be shown; the host's reductions run in the CPU tests); coll (pieces of 4 MiB) defaults to AUTO, and
# `PEERLINK_NET_REDUCE=HOST scripts/device/run-nodes.sh coll all_reduce reduce_scatter` beside the default run
# compares the two in one build.
# usage: scripts/device/run-nodes.sh net|comm|kill|stall|stall-sync|stall-async|bench
#        scripts/device/run-nodes.sh gpu-bench [NODES ...]
#        scripts/device/run-nodes.sh coll [all_reduce all_gather reduce_scatter all_to_all broadcast reduce send_recv]
set -uo pipefail
mode=${1:?usage: scripts/device/run-nodes.sh net|comm|kill|stall|stall-sync|stall-async|bench|gpu-bench [NODES ...]|coll [COLLECTIVE ...]}
shift
out=$(mktemp -d)
scripts/device/unpack-dist.sh  # what pack-call.sh carried compressed
peerlink_bin=$PWD/dist/peerlink
PEERLINK_MPI_LIBRARY=$PWD/dist/mpi/libpeerlink_mpi.so
results=nodes-coll
if [ -n "${COLL_BUILD:-}" ]; then
  peerlink_bin=$(realpath "$COLL_BUILD")/peerlink
  PEERLINK_MPI_LIBRARY=$(realpath "$COLL_BUILD")/libpeerlink_mpi.so
  results=nodes-coll-$(basename "$COLL_BUILD")
  [ -x "$peerlink_bin" ] && [ -e "$PEERLINK_MPI_LIBRARY" ] ||
    { echo "run-nodes.sh: COLL_BUILD=$COLL_BUILD has no peerlink and libpeerlink_mpi.so" >&2; exit 2; }
fi
export PEERLINK_MPI_LIBRARY PEERLINK_NET_CHUNK_BYTES=65536 \
  PEERLINK_COLL_SHARE_GPUS=1 PEERLINK_NET_TIMEOUT_MS=60000 PEERLINK_TIMEOUT_MS=60000 \
  PEERLINK_NET_REDUCE=${PEERLINK_NET_REDUCE:-$([ "$mode" = coll ] && echo AUTO || echo GPU)}
flags=(--allow-run-as-root --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader,tcp
       -x PEERLINK_MPI_LIBRARY -x PEERLINK_NET_CHUNK_BYTES -x PEERLINK_COLL_SHARE_GPUS -x PEERLINK_NET_TIMEOUT_MS
       -x PEERLINK_TIMEOUT_MS -x PEERLINK_NET_REDUCE)
# PEERLINK_NET_ASYNC=OFF: every call across nodes waits on the host, as before async calls (to compare the two).
[ -n "${PEERLINK_NET_ASYNC:-}" ] && flags+=(-x PEERLINK_NET_ASYNC)
case $mode in
  net | comm)
    program=$PWD/dist/mpi/mpi_net_e2e
    args=(gpu-collectives "$out")
    per_node=2
    if [ "$mode" = comm ]; then
      program=$PWD/dist/mpi/mpi_comm_nodes_e2e
      per_node=${COMM_PER_NODE:-2}
      [[ $per_node =~ ^[12]$ ]] || { echo "run-nodes.sh: COMM_PER_NODE=$per_node: 1 or 2" >&2; exit 2; }
      args=(collectives "$out" "$per_node")
    fi
    mpirun "${flags[@]}" -np $((2 * per_node)) sh -c 'PEERLINK_HOSTID=node$((OMPI_COMM_WORLD_RANK / $0)) exec "$@"' \
      "$per_node" "$program" "${args[@]}"
    status=$?
    cat "$out"/rank*.txt 2>/dev/null
    exit $status
    ;;
  kill)
    export PEERLINK_NET_TIMEOUT_MS=20000 PEERLINK_TIMEOUT_MS=20000
    exec tests/mpi/comm_nodes_fault.sh kill "$(command -v mpirun)" "$PWD/dist/mpi/mpi_comm_nodes_e2e" "$out" \
      "${flags[@]}"
    ;;
  stall | stall-sync | stall-async)
    export PEERLINK_NET_TIMEOUT_MS=5000 PEERLINK_TIMEOUT_MS=5000
    exec tests/mpi/comm_nodes_fault.sh "$mode" "$(command -v mpirun)" "$PWD/dist/mpi/mpi_comm_nodes_e2e" "$out" \
      "${flags[@]}"
    ;;
  bench)
    export PEERLINK_NET_CHUNK_BYTES=${COLL_CHUNK_BYTES:-4194304}
    read -r -a sizes <<<"${BENCH_SIZES:--b 1M -e 64M -f 4}"
    status=0
    for run in "direct" "staged" "staged --mca btl_vader_single_copy_mechanism none"; do
      read -r path mca <<<"$run"
      echo "== bench --path $path ${mca:-}"
      # shellcheck disable=SC2086 # mca: extra mpirun arguments, split on purpose
      timeout -k 10 300 mpirun "${flags[@]}" ${mca:-} -np 2 sh -c 'PEERLINK_HOSTID=node$OMPI_COMM_WORLD_RANK exec "$@"' \
        sh "$PWD/dist/mpi/mpi_net_bench" --path "$path" "${sizes[@]}" || status=1
    done
    "$0" gpu-bench 2 || status=1
    exit $status
    ;;
  gpu-bench)
    export PEERLINK_NET_CHUNK_BYTES=${COLL_CHUNK_BYTES:-4194304}
    status=0
    nodes=("$@")
    ((${#nodes[@]})) || nodes=(2)
    read -r -a sizes <<<"${GPU_BENCH_SIZES:--b 1M -e 64M -f 4}"
    for n in "${nodes[@]}"; do
      for reduce in ${GPU_BENCH_REDUCE:-AUTO GPU HOST}; do
        echo "== bench --memory gpu, $n nodes, PEERLINK_NET_REDUCE=$reduce"
        PEERLINK_NET_REDUCE=$reduce timeout -k 10 300 mpirun "${flags[@]}" -np "$n" \
          sh -c 'PEERLINK_HOSTID=node$OMPI_COMM_WORLD_RANK exec "$@"' sh "$PWD/dist/mpi/mpi_net_bench" --memory gpu \
          "${sizes[@]}" || status=1
      done
    done
    exit $status
    ;;
  coll)
    export PEERLINK_NET_CHUNK_BYTES=${COLL_CHUNK_BYTES:-4194304}
    collectives=("$@")
    export PER_NODE=${COLL_PER_NODE:-2}  # ranks a node; 2 nodes of them
    procs=$((2 * PER_NODE))
    nccl=(--no-nccl)
    if [ "${COLL_NCCL:-0}" = 1 ]; then
      nccl=()
      export NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0
      : "${PEERLINK_NCCL_LIBRARY:=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))" 2>/dev/null)}"
      export PEERLINK_NCCL_LIBRARY
      flags+=(-x NCCL_SOCKET_IFNAME -x NCCL_NVLS_ENABLE -x PEERLINK_NCCL_LIBRARY)
    fi
    ((${#collectives[@]})) || collectives=(all_reduce all_gather reduce_scatter all_to_all broadcast reduce send_recv)
    echo "== versions"
    "$peerlink_bin" --version
    mpirun --version 2>&1 | head -1
    nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
    ldd "$PEERLINK_MPI_LIBRARY" | grep -E "libmpi" || echo "libpeerlink_mpi.so: no libmpi found by ldd"
    env | grep '^PEERLINK_' | sort
    declare -A exit_of
    for collective in "${collectives[@]}"; do
      sizes=(-b 1K -e 64M -f 8)
      [ "$collective" = all_reduce ] && sizes=(-b 8 -e 512M -f 4)
      [ -n "${COLL_SIZES:-}" ] && IFS=: read -r begin end factor <<<"$COLL_SIZES" && sizes=(-b "$begin" -e "$end" -f "$factor")
      [ -n "${COLL_ITERS:-}" ] && sizes+=(-n "$COLL_ITERS")
      command=(mpirun "${flags[@]}" -x PER_NODE -np "$procs" sh -c
               'node=node$((OMPI_COMM_WORLD_RANK / PER_NODE)); PEERLINK_HOSTID=$node NCCL_HOSTID=$node exec "$@"' sh
               "$peerlink_bin" coll -o "$collective" "${sizes[@]}" "${nccl[@]}" --json "$out/coll-$collective.json")
      echo "== $collective: ${command[*]}"
      started=$SECONDS
      timeout -k 10 "${COLL_TIMEOUT:-240}" "${command[@]}" >"$out/coll-$collective.txt" 2>&1
      status=$?
      echo "== $collective: exit $status after $((SECONDS - started)) s"
      exit_of[$collective]=$status
    done
    mkdir -p "${OUT:-/tmp}" && tar -C "$out" -czf "${OUT:-/tmp}/$results.tar.gz" . &&
      echo "== outputs: ${OUT:-/tmp}/$results.tar.gz"
    # The answer, short enough for the tail of the output: per run its exit status, its checks and its section
    # across nodes (all of it for the all-reduce, the two largest sizes otherwise), and any error lines.
    failed=0
    summary=""
    for collective in "${collectives[@]}"; do
      text=$out/coll-$collective.txt
      echo "== summary $collective: exit ${exit_of[$collective]}"
      sed -n '/^# == peerlink: /,/^# == peerlink_graph: /p' "$text" |
        grep -E "^# (FAILED|Out of bounds|Avg bus|  +not run)"
      grep -A1 "^# == peerlink_graph: " "$text" | grep "not run" | head -1
      section=$(sed -n '/^# == across nodes/,/^# == every eager/p' "$text" | grep -E '^(# |  +[0-9])' |
        grep -v '^# == every eager')
      if [ -z "$section" ]; then
        echo "(no section across nodes)"
      elif [ "$collective" = all_reduce ]; then
        echo "$section" | grep -v '^# \(peerlink:\|MPI p2p:\|ratio =\)'
      else
        echo "$section" | sed -n '1p;/^# *size/p' && echo "$section" | grep -E '^ +[0-9]' | tail -4
      fi
      grep -iE "error|refused|peerlink: " "$text" | grep -v "^#" | head -5
      [ "${exit_of[$collective]}" = 0 ] || failed=1
      summary+=" $collective=${exit_of[$collective]}"
    done
    echo "== run-nodes coll: exit status of each run:$summary"
    exit $failed
    ;;
  *)
    echo "run-nodes.sh: unknown mode '$mode' (net, comm, kill, stall, stall-sync, stall-async, bench, gpu-bench, coll)" >&2
    exit 2
    ;;
esac
