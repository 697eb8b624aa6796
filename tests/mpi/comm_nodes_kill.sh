#!/bin/sh
# gpu.mpi.CommunicatorRankKilledAcrossNodes: 4 ranks as 2 nodes of 2 (PEERLINK_HOSTID from the MPI rank), rank 3
# kills itself before an all-reduce, and ranks 0-2 must each name it (RemoteError, its host and pid) well within
# the deadline. Open MPI's --enable-recovery keeps the survivors alive after a rank dies, so they can report; mpirun
# is stopped at a limit whatever happens. Prints SKIPPED (and passes as skipped) where rank 0 found no GPU.
# usage: comm_nodes_kill.sh MPIRUN PROGRAM DIR [mpirun flags...]
set -u
mpirun=$1 program=$2 dir=$3
shift 3
rm -rf "$dir" && mkdir -p "$dir" || exit 1
timeout -k 5 120 "$mpirun" "$@" --enable-recovery -np 4 sh -c \
  "PEERLINK_HOSTID=node\$(( \${OMPI_COMM_WORLD_RANK} / 2 )) exec $program kill $dir 2" >"$dir/mpirun.log" 2>&1
if grep -q SKIPPED "$dir/rank0.txt" 2>/dev/null; then
  cat "$dir/rank0.txt"
  exit 0
fi
status=0
for r in 0 1 2; do
  line=$(cat "$dir/rank$r.txt" 2>/dev/null || echo "(no report)")
  echo "rank $r: $line"
  echo "$line" | grep -E "^fault RemoteError after [0-9.]+ s: .*rank 3 \(host [^,]*, pid [0-9]+\)" >/dev/null || status=1
done
[ "$status" -eq 0 ] || { echo "FAILED: a survivor did not name rank 3"; tail -n 30 "$dir/mpirun.log"; }
exit "$status"
