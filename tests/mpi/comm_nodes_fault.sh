#!/bin/sh
# Faults of a communicator across nodes under mpirun (comm_nodes_e2e.cc), each rank's report checked:
#   kill   gpu.mpi.CommunicatorRankKilledAcrossNodes: 4 ranks as 2 nodes of 2 (PEERLINK_HOSTID from the MPI rank),
#          rank 3 kills itself before an all-reduce; ranks 0-2 must each name it (RemoteError, its host and pid)
#          well within the deadline.
#   stall  gpu.mpi.CommunicatorStreamStalledAcrossNodes: 2 ranks as 2 nodes of 1; rank 1's stream holds work that
#          outlasts the transport's deadline (PEERLINK_NET_TIMEOUT_MS, which must be set) before a 1 MiB all-reduce, a
#          queued call (PEERLINK_NET_REDUCE=HOST) that returns at once: rank 1's checkHealth must say its stream did
#          not reach the call's copies, rank 0 name rank 1, both within twice the deadline.
#   stall-sync  gpu.mpi.CommunicatorStreamStalledBeforeAWaitingCall: the same with PEERLINK_NET_ASYNC=OFF, the call
#          itself waiting on the host and failing: rank 1 must say its stream's work did not finish.
#   stall-async  gpu.mpi.CommunicatorStreamStalledBeforeAnAsyncCall: the same before a 4 KiB all-reduce, an async
#          call's kernel that returns at once: as `stall`.
# Open MPI's --enable-recovery keeps the survivors alive after a rank dies, so they can report; mpirun is stopped at a
# limit whatever happens. Prints SKIPPED (and passes as skipped) where rank 0 found no GPU.
# usage: comm_nodes_fault.sh kill|stall|stall-sync|stall-async MPIRUN PROGRAM DIR [mpirun flags...]
set -u
mode=$1 mpirun=$2 program=$3 dir=$4
shift 4
case "$mode" in
  kill) ranks=4 per_node=2 ;;
  stall | stall-sync | stall-async) ranks=2 per_node=1 ;;
  *) echo "comm_nodes_fault.sh: unknown mode '$mode' (kill, stall, stall-sync, stall-async)" >&2; exit 2 ;;
esac
# stall: the host reduces (PEERLINK_NET_REDUCE=HOST), so that the all-reduce is queued whatever the pieces' size.
program_mode=$mode settings=
[ "$mode" = stall ] && settings="PEERLINK_NET_REDUCE=HOST"
[ "$mode" = stall-sync ] && program_mode=stall settings="PEERLINK_NET_ASYNC=OFF"
rm -rf "$dir" && mkdir -p "$dir" || exit 1
timeout -k 5 120 "$mpirun" "$@" --enable-recovery -np "$ranks" sh -c \
  "$settings PEERLINK_HOSTID=node\$(( \${OMPI_COMM_WORLD_RANK} / $per_node )) exec $program $program_mode $dir $per_node" \
  >"$dir/mpirun.log" 2>&1
if grep -q SKIPPED "$dir/rank0.txt" 2>/dev/null; then
  cat "$dir/rank0.txt"
  exit 0
fi
report() { cat "$dir/rank$1.txt" 2>/dev/null || echo "(no report)"; }
# Whether a "fault CODE after S s: ..." line came within `limit` seconds.
within() { echo "$1" | awk -v limit="$2" '{ exit !($4 + 0 < limit) }'; }
status=0
if [ "$mode" = kill ]; then
  for r in 0 1 2; do
    line=$(report $r)
    echo "rank $r: $line"
    echo "$line" | grep -E "^fault RemoteError after [0-9.]+ s: .*rank 3 \(host [^,]*, pid [0-9]+\)" >/dev/null || status=1
  done
  [ "$status" -eq 0 ] || echo "FAILED: a survivor did not name rank 3"
else
  limit=$(awk -v ms="${PEERLINK_NET_TIMEOUT_MS:?set PEERLINK_NET_TIMEOUT_MS}" 'BEGIN { print 2 * ms / 1000 }')
  stalled=$(report 1)
  waiting=$(report 0)
  echo "rank 1: $stalled"
  echo "rank 0: $waiting"
  said="^fault [A-Za-z]+ after [0-9.]+ s: .*the caller's stream did not reach the call's copies into pinned host memory"
  [ "$mode" = stall-sync ] &&
    said="^fault Timeout after [0-9.]+ s: .*rank 1 .*the work on its stream before a phase across nodes did not finish"
  echo "$stalled" | grep -E "$said" >/dev/null &&
    within "$stalled" "$limit" || { echo "FAILED: rank 1 did not say its stream's work was late within $limit s"; status=1; }
  echo "$waiting" | grep -E "^fault (Timeout|RemoteError) after [0-9.]+ s: .*rank 1" >/dev/null &&
    within "$waiting" "$limit" || { echo "FAILED: rank 0 did not name rank 1 within $limit s"; status=1; }
fi
[ "$status" -eq 0 ] || tail -n 30 "$dir/mpirun.log"
exit "$status"
