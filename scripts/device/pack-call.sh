#!/usr/bin/env bash
# Packs ./dist for one device call under the carry limit (64 MiB): the CLI stripped, the named GPU test
# executables stripped and xz-compressed into dist/xz (scripts/device/call-lib.sh unpacks them there), and
# the call script itself; the development tools only when PACK_TOOLS=1 (all) or names some (PACK_TOOLS="engine_mix
# ce_batch": dist/peerlink_engine_mix, dist/peerlink_ce_batch). Build first (scripts/build.sh) and commit, so
# the binary's version names a commit.
# usage: scripts/device/pack-call.sh CALL_SCRIPT [gpu_test_name ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
script=${1:?usage: scripts/device/pack-call.sh CALL_SCRIPT [gpu_test_name ...]}
shift
./scripts/make-dist.sh >/dev/null
rm -f dist/tests/cpu_test_*
tools="tune relay_timeline host_cost ce_batch engine_mix ring_trace ce_chain push_fanout"
keep=${PACK_TOOLS:-0}
[ "$keep" = 1 ] && keep=$tools
[ "$keep" = 0 ] && keep=
for tool in $tools; do
  case " $keep " in
    *" $tool "*) strip "dist/peerlink_$tool" ;;
    *) rm -f "dist/peerlink_$tool" ;;
  esac
done
mkdir -p dist/xz
for name in "$@"; do
  [ -x "dist/tests/$name" ] || { echo "no such test executable: dist/tests/$name" >&2; exit 2; }
  strip "dist/tests/$name"
  xz -T2 -6 -c "dist/tests/$name" >"dist/xz/$name.xz"
done
rm -f dist/tests/gpu_test_*
strip dist/peerlink
cp "$script" dist/
du -sh dist
dist/peerlink --version
