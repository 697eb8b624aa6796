#!/usr/bin/env bash
# One GPU round on the device machine (nvidia-h200-x4), from the repository root with ./dist carried:
# every test executable, `peerlink topo`, the default `peerlink bench`, and nvidia-smi's view, all under
# $OUT (few files: the device tool returns at most 8). Prints a short summary last. The peerlink_tune sweeps
# run where dist has the tool (TOOLS=tune scripts/make-dist.sh) and ROUND_TUNE is not 0. CSV and HTML reports
# are rendered afterwards from bench.json, without a GPU:
# peerlink bench --from-json bench.json --csv bench.csv --html bench.html
set -uo pipefail
scripts/device/unpack-dist.sh  # what pack-call.sh carried compressed
out=${OUT:-/tmp/peerlink-round}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0  # never NVLink multicast on the shared machines

scripts/device/run-gpu-tests.sh >"$out/tests.txt" 2>&1
tests_rc=$?
dist/peerlink topo --json "$out/topo.json" >"$out/topo.txt" 2>&1
{ echo; echo "== nvidia-smi topo -m (same machine, same run)"; nvidia-smi topo -m; } >>"$out/topo.txt" 2>&1
start=$(date +%s)
dist/peerlink bench --json "$out/bench.json" ${PEERLINK_BENCH_ARGS:-} >"$out/bench.txt" 2>&1
bench_rc=$?
echo "bench: exit $bench_rc in $(( $(date +%s) - start )) s" >>"$out/bench.txt"
# Launch-shape and chunk sweeps, and the route log lines (PEERLINK_DEBUG_SUBSYS=P2P).
if [ "${ROUND_TUNE:-1}" = 1 ] && [ -x dist/peerlink_tune ]; then dist/peerlink_tune >"$out/tune.txt" 2>&1; fi
{ echo "== PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=P2P peerlink bench -p d2d_ -d 0,1 -n 2 -w 1 --no-verify (stderr)";
  PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=P2P dist/peerlink bench -p d2d_ -d 0,1 -n 2 -w 1 --no-verify 2>&1 >/dev/null; } \
  >>"$out/tune.txt" 2>&1

cat "$out/tests.txt"
echo "tests exit $tests_rc; bench exit $bench_rc"
grep -E '^(d2d|h2d|d2h|latency)|SUM|ERROR|FAILED|N/A' "$out/bench.txt" | head -40
[ -f "$out/tune.txt" ] && grep -A12 '^SM copy both ways' "$out/tune.txt"
