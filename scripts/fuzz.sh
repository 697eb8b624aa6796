#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang, AddressSanitizer + UndefinedBehaviorSanitizer; installs what
# is missing) and runs each from its committed seeds; fails on any crash, leak, undefined behaviour or
# timeout. New inputs go to a scratch folder, never into fuzz/corpus.
#
#   scripts/fuzz.sh                  every target for 20 s
#   scripts/fuzz.sh -t 15            every target for 15 s (what CI runs)
#   scripts/fuzz.sh -r 1000000 X Y   targets X and Y for 1,000,000 executions each
#
# Each target's last statistics line (executions, speed, coverage) is printed; logs stay in build-fuzz/logs.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=20
runs=""
while getopts "t:r:" flag; do
  case "$flag" in
    t) seconds="$OPTARG" ;;
    r) runs="$OPTARG" ;;
    *) echo "usage: scripts/fuzz.sh [-t SECONDS] [-r RUNS] [TARGET...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))

packages=(clang lld libclang-rt-14-dev cmake ninja-build libfmt-dev nlohmann-json3-dev)
./scripts/install-missing.sh "${packages[@]}"

launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
export CCACHE_BASEDIR="$PWD"
# These builds keep debug info (-g), for which ccache would otherwise hash the checkout's folder, so one clone's objects
# would never serve another's (CI's clean clone, a developer's checkout): the debug info's compile folder may then
# name the other checkout; the reports' file:line are relative to the checkout (CCACHE_BASEDIR) either way.
export CCACHE_NOHASHDIR=1
cmake -S fuzz -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" >/dev/null
cmake --build build-fuzz -j "$(nproc)"

if (($# == 0)); then
  mapfile -t targets < <(find fuzz -maxdepth 1 -name 'fuzz_*.cc' -printf '%f\n' | sed 's/^fuzz_//; s/\.cc$//' | sort)
else
  targets=("$@")
fi

mkdir -p build-fuzz/logs
status=0
for target in "${targets[@]}"; do
  work="$(mktemp -d)"
  options=(-print_final_stats=1 -timeout=10 -rss_limit_mb=4096 "-artifact_prefix=$work/")
  if [ -n "$runs" ]; then options+=("-runs=$runs"); else options+=("-max_total_time=$seconds"); fi
  if [[ "$target" == *_json ]]; then options+=(-dict=fuzz/json.dict); fi
  log="build-fuzz/logs/$target.log"
  if "./build-fuzz/fuzz_$target" "${options[@]}" "$work" "fuzz/corpus/$target" >"$log" 2>&1; then
    done_line="$(grep -E '^#[0-9]+.*DONE' "$log" | tail -1 || true)"
    executions="$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')"
    echo "fuzz_$target: ok, $executions executions (${done_line:-no DONE line})"
    rm -rf "$work"
  else
    status=1
    echo "fuzz_$target: FAILED; the input is in $work, the log in $log:" >&2
    grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$log" | head -20 >&2 || tail -20 "$log" >&2
  fi
done
exit "$status"
