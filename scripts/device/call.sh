#!/usr/bin/env bash
# One device call: run from the repository root on the GPU machine, with ./dist carried
# (scripts/device/pack-call.sh). Runs the steps given, in order, each writing into /tmp/call-NAME/, and packs
# that folder into $OUT/call-NAME.tar.gz after every step, so a call cut off by its time limit still returns
# what it finished. call.txt in the folder records what ran: this command line, the GPUs, the binary's
# version. Prints one line per step and ends non-zero if a step failed. Examples: scripts/device/README.md.
#
# usage: scripts/device/call.sh NAME STEP [STEP ...]
# A STEP is one argument, words separated by spaces: [VAR=VALUE ...] KIND ARGS...
#   coll   LOG LIMIT_S ARGS...       dist/peerlink coll ARGS --json LOG.json, its text in LOG.txt
#   bench  LOG LIMIT_S ARGS...       dist/peerlink bench ARGS --json LOG.json, its text in LOG.txt
#   test   LOG LIMIT_S EXE ARGS...   dist/tests/EXE ARGS (a GoogleTest executable) into LOG.txt; EXE as ALT/NAME:
#                                    dist/ALT/tests/NAME, another build's (pack-call.sh's PACK_ALT_TESTS)
#   tool   LOG LIMIT_S TOOL ARGS...  dist/peerlink_TOOL ARGS (a development tool, PACK_TOOLS) into LOG.txt
#   create LOG COUNT                 a communicator's creation, first in each of COUNT fresh processes
#                                    (gpu_test_communicator packed), into LOG-1.txt ... LOG-COUNT.txt
#   run    LOG LIMIT_S COMMAND...    any command into LOG.txt
# VAR=VALUE words set that step's environment only. Words are not globbed: gtest filters keep their '*'.
set -uo pipefail
usage="usage: scripts/device/call.sh NAME STEP [STEP ...] (scripts/device/README.md)"
name=${1:?$usage}
shift
[ $# -gt 0 ] || { echo "call.sh: no steps. $usage" >&2; exit 2; }
[[ $name =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "call.sh: call name '$name': letters, digits, '.', '_', '-' only" >&2; exit 2; }

# Every step is checked before anything runs: a typo should cost no device time.
check_step() {  # check_step STEP: exits 2 naming the step if it is malformed
  local step=$1 words kind
  read -r -a words <<<"$step"
  while [ ${#words[@]} -gt 0 ] && [[ ${words[0]} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do words=("${words[@]:1}"); done
  kind=${words[0]:-}
  local bad=""
  case $kind in
    coll | bench | run) [ ${#words[@]} -ge 3 ] || bad="needs LOG LIMIT_S and arguments" ;;
    test | tool) [ ${#words[@]} -ge 4 ] || bad="needs LOG LIMIT_S and what to run" ;;
    create) [ ${#words[@]} -eq 3 ] && [[ ${words[2]} =~ ^[1-9][0-9]*$ ]] || bad="needs LOG and a process count" ;;
    *) bad="unknown kind '$kind' (coll, bench, test, tool, create, run)" ;;
  esac
  [ -n "$bad" ] || [[ ${words[1]} =~ ^[A-Za-z0-9_.=-]+$ ]] || bad="log name '${words[1]}': letters, digits, '.', '_', '=', '-' only"
  if [ -z "$bad" ] && [ "$kind" != create ] && ! [[ ${words[2]} =~ ^[1-9][0-9]*$ ]]; then
    bad="time limit '${words[2]}' is not a number of seconds"
  fi
  if [ -n "$bad" ]; then
    echo "call.sh: step '$step': $bad" >&2
    exit 2
  fi
}
for step in "$@"; do check_step "$step"; done

# Binaries carried xz-compressed (the CLI, the NCCL library, dist/extra/NAME.xz run as dist/extra/NAME, the test
# executables) are unpacked first: call-lib.sh runs scripts/device/unpack-dist.sh.
# shellcheck source=scripts/device/call-lib.sh
source scripts/device/call-lib.sh "call-$name"  # sets p, the call's folder, and defines t and save
quoted() { local arg; for arg in "$@"; do printf " '%s'" "${arg//\'/\'\\\'\'}"; done; }
gpus=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | sort | uniq -c | sed 's/^ *//' | tr '\n' ';')
{
  echo "scripts/device/call.sh $name$(quoted "$@")"
  echo "GPUs: $gpus"
  dist/peerlink --version
} >"$p/call.txt" 2>&1
echo "GPUs: $gpus"

# What a coll run says in a line: per size, peerlink's graph against NCCL's best out of place (ratio g), or
# without NCCL the graph's times out of place / in place.
coll_summary() {
  awk '/^# == peerlink vs the best NCCL.*out-of-place/ { cmp = 1; next }
       /^# == / { cmp = 0; graph = ($2 == "peerlink_graph:"); next }
       cmp && /^ +[0-9]+ / { ratios = ratios $1 ":" $7 "x " }
       graph && /^ +[0-9]+ / { times = times $1 ":" $6 "/" $10 " " }
       END { printf "%s", (ratios != "" ? ratios : times) }' "$1"
}

failed=0
for step in "$@"; do
  read -r -a words <<<"$step"
  env_words=()
  while [[ ${words[0]} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
    env_words+=("${words[0]}")
    words=("${words[@]:1}")
  done
  kind=${words[0]}
  log=${words[1]}
  start=$SECONDS
  rc=0
  case $kind in
    coll | bench)
      timeout "${words[2]}" env "${env_words[@]}" dist/peerlink "$kind" "${words[@]:3}" --json "$p/$log.json" \
        >"$p/$log.txt" 2>&1 || rc=$?
      if [ "$kind" = coll ]; then detail=$(coll_summary "$p/$log.txt"); else detail=$(grep -c 'SUM' "$p/$log.txt")" sums"; fi
      echo "$log: exit $rc in $((SECONDS - start)) s ${env_words[*]} $detail"
      ;;
    test)
      executable=dist/tests/${words[3]}
      [[ ${words[3]} == */* ]] && executable=dist/${words[3]%%/*}/tests/${words[3]#*/}
      t "$log" "${words[2]}" env "${env_words[@]}" "$executable" "${words[@]:4}"
      grep -qE '^\[  PASSED  \]' "$p/$log.txt" && ! grep -qE '^\[  FAILED  \]' "$p/$log.txt" || rc=1
      ;;
    tool | run)
      command=("${words[@]:3}")
      [ "$kind" = tool ] && command=("dist/peerlink_${words[3]}" "${words[@]:4}")
      timeout "${words[2]}" env "${env_words[@]}" "${command[@]}" >"$p/$log.txt" 2>&1 || rc=$?
      echo "$log: exit $rc in $((SECONDS - start)) s ${env_words[*]}"
      tail -n 12 "$p/$log.txt"
      ;;
    create)
      for i in $(seq "${words[2]}"); do
        r=0
        timeout 60 env PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL "${env_words[@]}" dist/tests/gpu_test_communicator \
          --gtest_filter='Communicator.CreatesOnEveryGpuAndReportsCreationTime' >"$p/$log-$i.txt" 2>&1 || r=$?
        echo "$log-$i: exit $r $(grep -o 'created in [0-9.]* ms ([a-z ]*' "$p/$log-$i.txt" | tr '\n' ' ')"
        [ "$r" = 0 ] || rc=$r
      done
      ;;
  esac
  [ "$rc" = 0 ] || failed=1
  save
done
echo "call $name: $# step(s) in ${SECONDS} s, $([ $failed = 0 ] && echo 'every one exited 0' || echo 'some failed'); results in \$OUT/call-$name.tar.gz"
exit $failed
