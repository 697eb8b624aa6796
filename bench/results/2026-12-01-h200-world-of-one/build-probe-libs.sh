#!/usr/bin/env bash
# Builds the NCCL libraries call k compares, each from c340046a (the last commit whose NCCL API launched a kernel for a
# call of one rank) in a worktree of its own under /tmp, with a probe patch of this folder applied (copy-only: the
# all-reduce kernel of one rank without its counters, griddepcontrol and trace; no-event: no event recorded behind a
# call of one rank); the library as it was cost 0.8-1.1 us a gap in calls d, g and h. Then packs them beside the
# current build, without the CLI (the carry limit: the tree is 48 MiB):
#   bench/results/2026-12-01-h200-world-of-one/build-probe-libs.sh && cp .../call-k.sh dist/
set -euo pipefail
cd "$(dirname "$0")/../../.."
folder=bench/results/2026-12-01-h200-world-of-one
alts=()
for name in copy-only no-event; do
  tree=/tmp/probe-$name
  if [ ! -d "$tree" ]; then
    git worktree add -q --detach "$tree" c340046a
    git -C "$tree" apply "$PWD/$folder/probe-$name.patch"
  fi
  cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache -DPEERLINK_BUILD_TESTS=OFF -DPEERLINK_WERROR=ON >/dev/null
  CCACHE_BASEDIR="$tree" ninja -C "$tree/build" peerlink peerlink_nccl >/dev/null
  alts+=("${name//-/}=$tree/build")
done
rm -rf dist
PACK_ALT="${alts[*]}" scripts/device/pack-call.sh >/dev/null 2>&1 || true  # over the limit until the CLI goes
rm -f dist/peerlink.xz
du -sh dist
