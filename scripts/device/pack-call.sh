#!/usr/bin/env bash
# Packs ./dist for one device call under the carry limit (64 MiB with the working tree): the CLI and the NCCL
# library stripped and xz-compressed in place, the named GPU test executables (`all`: every one built) stripped
# into one solid archive, dist/xz/tests.tar.xz -- each statically links the library, so the second and later cost
# about a tenth of the first (scripts/device/unpack-dist.sh unpacks them into dist/tests),
# and the development tools PACK_TOOLS names (PACK_TOOLS="engine_mix ce_batch": dist/peerlink_engine_mix,
# dist/peerlink_ce_batch; PACK_TOOLS=all: every one), built by scripts/make-dist.sh. Build first
# (scripts/build.sh) and commit, so the binary's version names a commit. The call itself is then
# scripts/device/call.sh, which travels with the working tree (scripts/device/README.md).
# PACK_ALT="NAME=DIR ..." also carries other builds' NCCL libraries (DIR/nccl_api/libpeerlink_nccl.so.2, with
# DIR/peerlink's version beside it in dist/NAME/VERSION) as dist/NAME/nccl_api, for runs of several builds in one
# call: run-nccl-api.sh's runs with the setting LIB=NAME preload it. A bare DIR is alt=DIR.
# PACK_ALT_TESTS="NAME/gpu_test_a NAME/gpu_test_b ..." also carries those test executables of PACK_ALT's build NAME
# (DIR/tests/gpu_test_a), as dist/NAME/xz/tests.tar.xz (unpacked into dist/NAME/tests; call.sh's step
# `test LOG LIMIT_S NAME/gpu_test_a`), with the build's source folder in dist/NAME/SOURCE_DIR, which call-lib.sh links
# to this checkout and its build's nccl_api/ to dist/NAME/nccl_api: the tests find fixtures and the NCCL library by
# the paths they were built with.
# usage: scripts/device/pack-call.sh [all | gpu_test_name ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
TOOLS=${PACK_TOOLS:-} ./scripts/make-dist.sh >/dev/null
rm -f dist/tests/cpu_test_*
for tool in dist/peerlink_*; do
  if [ -e "$tool" ]; then strip "$tool"; fi
done
names=("$@")
if [ "${names[*]:-}" = all ]; then
  names=()
  for built in dist/tests/gpu_test_*; do names+=("$(basename "$built")"); done
fi
mkdir -p dist/xz
if [ ${#names[@]} -gt 0 ]; then
  for name in "${names[@]}"; do
    [ -x "dist/tests/$name" ] || { echo "no such test executable: dist/tests/$name" >&2; exit 2; }
    strip "dist/tests/$name"
  done
  # One stream whose 64 MiB dictionary reaches back over the executable before (about 31 MB each stripped, most of
  # it the same library): four of them pack into 4.3 MB where one alone is 3.5. A single stream, so one thread.
  tar cf - -C dist/tests "${names[@]}" | xz -T1 --lzma2=preset=6,dict=64MiB -c >dist/xz/tests.tar.xz
fi
rm -f dist/tests/gpu_test_*
strip dist/peerlink
strip dist/nccl_api/libpeerlink_nccl.so.2
dist/peerlink --version
alt_name() {  # alt_name ENTRY: the NAME of a PACK_ALT entry NAME=DIR (alt for a bare DIR)
  if [[ $1 == *=* ]]; then echo "${1%%=*}"; else echo alt; fi
}
for wanted in ${PACK_ALT_TESTS:-}; do
  found=0
  for alt in ${PACK_ALT:-}; do
    [ "$(alt_name "$alt")" = "${wanted%%/*}" ] && found=1
  done
  if [[ $wanted != */* ]] || [ "$found" = 0 ]; then
    echo "PACK_ALT_TESTS: '$wanted' is not NAME/TEST of a PACK_ALT build NAME=DIR" >&2
    exit 2
  fi
done
for alt in ${PACK_ALT:-}; do
  name=$(alt_name "$alt")
  dir=${alt#*=}
  if ! [[ $name =~ ^[A-Za-z0-9_-]+$ ]] || [ "$name" = nccl_api ] || [ ! -f "$dir/nccl_api/libpeerlink_nccl.so.2" ]; then
    echo "PACK_ALT: '$alt' is not NAME=DIR (letters, digits, '_', '-') of a build with nccl_api/libpeerlink_nccl.so.2" >&2
    exit 2
  fi
  mkdir -p "dist/$name/nccl_api"
  cp "$dir/nccl_api/libpeerlink_nccl.so.2" "dist/$name/nccl_api/"
  strip "dist/$name/nccl_api/libpeerlink_nccl.so.2"
  "$dir/peerlink" --version >"dist/$name/VERSION" 2>&1 || echo "unknown ($dir has no CLI)" >"dist/$name/VERSION"
  echo "$name: $(cat "dist/$name/VERSION")"
  xz -T2 -6 -f "dist/$name/nccl_api/libpeerlink_nccl.so.2"
  tests=()
  for wanted in ${PACK_ALT_TESTS:-}; do
    [ "${wanted%%/*}" = "$name" ] && tests+=("${wanted#*/}")
  done
  if [ ${#tests[@]} -gt 0 ]; then
    staged=$(mktemp -d)
    for test in "${tests[@]}"; do
      [ -x "$dir/tests/$test" ] || { echo "PACK_ALT_TESTS: $dir has no test executable tests/$test" >&2; exit 2; }
      strip -o "$staged/$test" "$dir/tests/$test"
    done
    mkdir -p "dist/$name/xz"
    tar cf - -C "$staged" "${tests[@]}" | xz -T1 --lzma2=preset=6,dict=64MiB -c >"dist/$name/xz/tests.tar.xz"
    rm -rf "$staged"
    sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$dir/CMakeCache.txt" >"dist/$name/SOURCE_DIR"
  fi
done
# The CLI and the NCCL library compressed too (scripts/device/unpack-dist.sh, which every device script runs first,
# unpacks them there): with them plain, two or three test executables passed the limit.
xz -T2 -6 -f dist/peerlink dist/nccl_api/libpeerlink_nccl.so.2
du -sh dist
# What travels: the working tree (tracked and untracked-not-ignored files) and the carried dist/, at most 64 MiB
# together. Measured as a tar of each, which matches where the device tool refused and where it took a call
# (per-file overhead makes the tree's ~5,000 files weigh more than their bytes).
tree=$(git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - 2>/dev/null | wc -c)
carried=$(tar cf - dist | wc -c)
mib=$(((tree + carried + 1048575) / 1048576))
echo "travels: about $mib MiB of 64 (the tree $((tree / 1048576)) MiB, dist/ $((carried / 1048576)) MiB; nccl-tests, packed after, add 3)"
if [ "$mib" -gt 64 ]; then
  echo "pack-call.sh: over the device tool's 64 MiB: carry fewer test executables (or alternative builds)" >&2
  exit 3
fi
