#!/bin/bash
# Runs COMMAND in the background; if it is still running after WAIT_S seconds, writes every thread's backtrace of each
# process running the program PROCESS (cuda-gdb attaching: the GPU machines have no gdb) to $OUT/bt-LABEL-PID.txt,
# then stops the command. Prints the command's exit status, or "hung".
# A process runs the program where its command line starts with the program's path (mpirun's and this script's
# command lines name the program too, further on). From the repository root on the GPU machine, $OUT set (the device
# call's output folder).
# usage: scripts/device/hang-backtraces.sh LABEL WAIT_S PROCESS COMMAND [ARGS...]
#   e.g. COMM_PER_NODE=1 scripts/device/hang-backtraces.sh comm-1 40 mpi_comm_nodes_e2e scripts/device/run-nodes.sh comm
set -u
[ $# -ge 4 ] || { echo "usage: scripts/device/hang-backtraces.sh LABEL WAIT_S PROCESS COMMAND [ARGS...]" >&2; exit 2; }
label=$1 wait_s=$2 process=$3
shift 3
"$@" >"$OUT/$label.txt" 2>&1 &
runner=$!
for _ in $(seq "$wait_s"); do
  sleep 1
  kill -0 "$runner" 2>/dev/null || { wait "$runner"; echo "$label: exit $?"; exit 0; }
done
echo "$label: hung after $wait_s s"
pattern="^[^ ]*/$process( |\$)"
for pid in $(pgrep -f "$pattern"); do
  timeout 60 cuda-gdb -p "$pid" -batch -ex "info threads" -ex "thread apply all bt 30" >"$OUT/bt-$label-$pid.txt" 2>&1
done
pkill -f mpirun
sleep 2
pkill -9 -f "$pattern"
wait "$runner"
