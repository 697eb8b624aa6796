#!/bin/bash
# Runs COMMAND in the background; if it is still running after WAIT_S seconds, writes every thread's backtrace of each
# process named PROCESS (cuda-gdb attaching: the GPU machines have no gdb) to $OUT/bt-LABEL-PID.txt, then stops the
# command. Prints the command's exit status, or "hung".
# usage: hang-backtraces.sh LABEL WAIT_S PROCESS COMMAND [ARGS...]
label=$1 wait_s=$2 process=$3
shift 3
"$@" >"$OUT/$label.txt" 2>&1 &
runner=$!
for _ in $(seq "$wait_s"); do
  sleep 1
  kill -0 "$runner" 2>/dev/null || { wait "$runner"; echo "$label: exit $?"; exit 0; }
done
echo "$label: hung after $wait_s s"
for pid in $(pgrep -f "$process"); do
  timeout 60 cuda-gdb -p "$pid" -batch -ex "info threads" -ex "thread apply all bt 30" >"$OUT/bt-$label-$pid.txt" 2>&1
done
pkill -f mpirun
sleep 2
pkill -9 -f "$process"
wait "$runner"
