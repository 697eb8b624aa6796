#!/usr/bin/env bash
# Unpacks what scripts/device/pack-call.sh carried xz-compressed to stay under the carry limit (64 MiB), in place
# under ./dist, from the repository root on the GPU machine; does nothing for what is already unpacked, so every
# device script may run it first:
#   dist/peerlink.xz                      -> dist/peerlink
#   dist/nccl_api/libpeerlink_nccl.so.2.xz -> dist/nccl_api/libpeerlink_nccl.so.2 (and its libnccl.so.2 link)
#   dist/NAME/nccl_api/libpeerlink_nccl.so.2.xz -> the same under dist/NAME (pack-call.sh's PACK_ALT)
#   dist/mpi/NAME.xz, dist/extra/NAME.xz  -> beside them (dist/extra/peerlink stands in for a missing dist/peerlink)
#   dist/build-ID/NAME.xz                 -> beside them (another build's binaries, e.g. run-nodes.sh's COLL_BUILD)
#   dist/xz/tests.tar.xz (test executables, one solid archive) -> dist/tests/NAME
#   dist/ALT/xz/tests.tar.xz (another build's, PACK_ALT_TESTS)     -> dist/ALT/tests/NAME
# usage: scripts/device/unpack-dist.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
unpack() {  # unpack PACKED TARGET
  [ -e "$2" ] && return 0
  mkdir -p "$(dirname "$2")"
  xz -dc "$1" >"$2.part" && chmod +x "$2.part" && mv "$2.part" "$2"
}
for packed in dist/peerlink.xz dist/*/nccl_api/*.xz dist/nccl_api/*.xz dist/mpi/*.xz dist/extra/*.xz dist/build-*/*.xz; do
  [ -e "$packed" ] || continue
  unpack "$packed" "${packed%.xz}"
done
for packed in dist/xz/tests.tar.xz dist/*/xz/tests.tar.xz; do
  [ -e "$packed" ] || continue
  tests=$(dirname "$(dirname "$packed")")/tests
  [ -e "$tests/.unpacked" ] && continue
  mkdir -p "$tests"
  xz -dc "$packed" | tar xf - -C "$tests"
  touch "$tests/.unpacked"
done
[ -e dist/peerlink ] || [ ! -e dist/extra/peerlink ] || cp dist/extra/peerlink dist/peerlink
for dir in dist/nccl_api dist/*/nccl_api; do
  if [ -e "$dir/libpeerlink_nccl.so.2" ]; then ln -sfn libpeerlink_nccl.so.2 "$dir/libnccl.so.2"; fi
done
