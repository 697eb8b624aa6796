#!/usr/bin/env bash
# The model of `peerlink plan` against every committed `peerlink coll --json` run: finds the runs under the folders
# given (default: bench/results), then `peerlink plan --check` predicts each of their cells for the kernel the run
# recorded and prints, per machine, the median absolute error, the worst cell and every size beside its
# measurement (docs/plan.md). Runs older than the kernels' names are listed as skipped, with the reason.
#
# usage: scripts/plan_check.sh [FOLDER|FILE ...] [-- PLAN-OPTIONS ...]
#   PLAN-OPTIONS go to `peerlink plan --check`: --model FILE, --json FILE, --max-median-error 0.1
#   PEERLINK: the peerlink binary (default: build/peerlink)
set -euo pipefail
cd "$(dirname "$0")/.."

peerlink="${PEERLINK:-build/peerlink}"
if [ ! -x "$peerlink" ]; then
  echo "plan_check: $peerlink not found: build first (./scripts/build.sh) or set PEERLINK" >&2
  exit 2
fi
places=()
while (($#)) && [ "$1" != "--" ]; do
  places+=("$1")
  shift
done
if (($#)); then shift; fi
if ((${#places[@]} == 0)); then places=(bench/results); fi

runs=()
while IFS= read -r -d '' file; do
  if grep -q '"schema": *"peerlink.coll"' "$file"; then runs+=("$file"); fi
done < <(find "${places[@]}" -name '*.json' -print0 | sort -z)
if ((${#runs[@]} == 0)); then
  echo "plan_check: no peerlink coll run under ${places[*]}" >&2
  exit 2
fi
exec "$peerlink" plan --check "${runs[@]}" "$@"
