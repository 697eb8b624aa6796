#!/usr/bin/env bash
# compute-sanitizer over a GPU test executable on the GPU machine (docs/reliability.md): each tool named in TOOLS
# (default: memcheck racecheck synccheck) runs the executable under it with the gtest filter given, every process
# it starts followed; a tool's run ends non-zero when it reports an error (--error-exitcode 9) or the tests fail.
# Run from the repository root with ./dist carried (scripts/device/pack-call.sh EXECUTABLE), usually as a call.sh
# `run` step:
#   scripts/device/call.sh NAME "run kernels 300 scripts/device/run-sanitizer.sh gpu_test_gpu_kernels '*OnOneGpu*'"
# Collectives' ranks meet inside their kernels, which run slower instrumented: give such tests a long deadline
# (PEERLINK_TIMEOUT_MS=60000 in the step).
# usage: scripts/device/run-sanitizer.sh EXECUTABLE [GTEST_FILTER]
set -uo pipefail
executable=${1:?usage: scripts/device/run-sanitizer.sh EXECUTABLE [GTEST_FILTER]}
filter=${2:-*}
scripts/device/unpack-dist.sh  # what pack-call.sh carried compressed
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$sanitizer" ] || { echo "run-sanitizer.sh: no compute-sanitizer (PATH, /usr/local/cuda/bin)" >&2; exit 2; }
[ -x "dist/tests/$executable" ] || { echo "run-sanitizer.sh: no dist/tests/$executable" >&2; exit 2; }
"$sanitizer" --version | tail -1
worst=0
for tool in ${TOOLS:-memcheck racecheck synccheck}; do
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  echo "== $tool: $executable --gtest_filter=$filter"
  started=$SECONDS
  log=$(mktemp)
  "$sanitizer" --tool "$tool" "${extra[@]}" --target-processes all --error-exitcode 9 \
    "dist/tests/$executable" --gtest_filter="$filter" >"$log" 2>&1
  status=$?
  # The tool's own lines (its findings and summary) and the tests' verdicts; the whole output can be long.
  grep -E '^=========' "$log" | head -n 120
  grep -E '^\[  (PASSED|FAILED|SKIPPED) *\]|^\[==========\]' "$log" | tail -n 20
  if [ "$status" -ne 0 ]; then  # where it stopped: the tests' own lines before the end
    echo "== $tool: the last 60 lines of the output"
    tail -n 60 "$log"
  fi
  rm -f "$log"
  echo "== $tool: exit $status after $((SECONDS - started)) s"
  [ "$status" -ne 0 ] && worst=$status
done
exit "$worst"
