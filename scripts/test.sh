#!/usr/bin/env bash
# Installs what is missing, builds, checks formatting, and runs every test. Tests labelled `gpu` report
# "Skipped" (with the reason printed below) on a machine without a GPU; `cpu` tests always run.
set -euo pipefail
cd "$(dirname "$0")/.."

# The one-definition-rule check (CMakeLists.txt, PEERLINK_ODR_CHECK) links every C++ source once more with LTO.
# The Python package (python/, docs/python.md) is built and tested with the interpreter python-env.sh prepares.
python=$(./scripts/python-env.sh)
./scripts/build.sh -DPEERLINK_ODR_CHECK=ON -DPEERLINK_PYTHON=ON "-DPython_EXECUTABLE=$python" "$@"
./scripts/lint.sh

status=0
ctest --test-dir build --output-on-failure -j "$(nproc)" || status=$?

# ctest shows skipped tests as "Skipped" only; print each one's reason from the log.
log=build/Testing/Temporary/LastTest.log
if [ -f "$log" ] && grep -q '^\[  SKIPPED \] .* ms)$' "$log"; then
  echo "Skipped tests and why:"
  awk '/: Skipped$/ {getline reason} /^\[  SKIPPED \] .* ms\)$/ {print "  " $4 ": " reason}' "$log" | sort -u
fi
exit "$status"
