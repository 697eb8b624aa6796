#!/usr/bin/env bash
# Gathers what a GPU machine needs into ./dist (ignored by git), laid out as in ./build: the CLI, NCCL's API
# library (nccl_api/), every test executable and the fake NVML libraries the NVML tests load. Build first
# (scripts/build.sh).
# TOOLS="push_fanout tune" (or TOOLS=all) also builds and copies those development probes of tools/tune as
# dist/peerlink_<name>: it turns PEERLINK_BUILD_TOOLS on in ./build, which the normal build leaves off.
# The binaries link the CUDA runtime statically and load the driver and NVML at run time, so they run on
# any machine whose NVIDIA driver is new enough for this toolkit.
set -euo pipefail
cd "$(dirname "$0")/.."
all_tools="tune relay_timeline host_cost ce_batch engine_mix ring_trace ce_chain push_fanout host_copy"
tools=${TOOLS:-}
[ "$tools" = all ] && tools=$all_tools
for tool in $tools; do
  case " $all_tools " in
    *" $tool "*) ;;
    *) echo "make-dist: no development tool named '$tool' (known: $all_tools)" >&2; exit 2 ;;
  esac
done
targets=()
for tool in $tools; do targets+=("peerlink_$tool"); done
if ((${#targets[@]})); then
  cmake -S . -B build -DPEERLINK_BUILD_TOOLS=ON >/dev/null
  cmake --build build --target "${targets[@]}"
fi
rm -rf dist
mkdir -p dist/tests
cp build/peerlink dist/
# NCCL's API over peerlink, with the libnccl.so.2 link beside it (`peerlink nccl-path` finds both there).
mkdir -p dist/nccl_api
cp build/nccl_api/libpeerlink_nccl.so.2 dist/nccl_api/
ln -sfn libpeerlink_nccl.so.2 dist/nccl_api/libnccl.so.2
for tool in $tools; do cp "build/peerlink_$tool" dist/; done
find build/tests -maxdepth 1 -type f -executable -name '*_test_*' -exec cp {} dist/tests/ \;
(cd build && find tests -name 'libfake_nvml*.so' -exec cp --parents {} ../dist/ \;)
# Tests find fixtures by the absolute source path they were built with; the GPU run links it back.
pwd >dist/SOURCE_DIR
du -sh dist
