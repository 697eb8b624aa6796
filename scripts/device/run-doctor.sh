#!/usr/bin/env bash
# `peerlink doctor` on the device machine, from the repository root with ./dist carried: a full run (text
# and JSON), the same again answered by the verdict cache, --quick, and the faults that can be made on
# purpose there -- a dropped flag (PEERLINK_FAULT_DROP_FLAG), a peer hidden from the second process
# (--helper-visible-devices), and an open-file limit too low for passing descriptors. Everything goes to
# $OUT/doctor.txt (plus JSON files); each run's exit code and wall time is printed.
set -uo pipefail
scripts/device/unpack-dist.sh  # what pack-call.sh carried compressed
out=${OUT:-/tmp/peerlink-doctor}
mkdir -p "$out"
export PEERLINK_DOCTOR_CACHE_DIR="$out/cache"
log="$out/doctor.txt"
: >"$log"
run() {  # run <title> <command...>
  local title=$1; shift
  { echo; echo "== $title"; echo "\$ $*"; } >>"$log"
  local start rc ms
  start=$(date +%s%N)
  "$@" >>"$log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  printf '%s: exit %d in %d.%03d s\n' "$title" "$rc" $((ms / 1000)) $((ms % 1000)) | tee -a "$log"
}
run "full" dist/peerlink doctor --no-cache
run "full, JSON" dist/peerlink doctor --json "$out/doctor.json"
run "again, from the cache" dist/peerlink doctor
run "quick" dist/peerlink doctor --quick --no-cache --json "$out/doctor-quick.json"
run "quick again, from the cache" dist/peerlink doctor --quick
run "fault: dropped flag" env PEERLINK_FAULT_DROP_FLAG=1 dist/peerlink doctor --no-cache --timeout-ms 1000 \
  --json "$out/doctor-drop-flag.json"
run "fault: peer hidden from the second process" dist/peerlink doctor --no-cache --helper-visible-devices 0 \
  --json "$out/doctor-hidden-peer.json"
for limit in 64 32; do
  run "fault: open-file limit $limit" bash -c "ulimit -n $limit && exec dist/peerlink doctor --no-cache -d 0,1"
done
