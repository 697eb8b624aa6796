#!/usr/bin/env bash
# Gathers what a GPU machine needs into ./dist (ignored by git), laid out as in ./build: the CLI, every
# test executable and the fake NVML libraries the NVML tests load. Build first (scripts/build.sh).
# The binaries link the CUDA runtime statically and load the driver and NVML at run time, so they run on
# any machine whose NVIDIA driver is new enough for this toolkit.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf dist
mkdir -p dist/tests
cp build/peerlink build/peerlink_tune build/peerlink_relay_timeline build/peerlink_host_cost build/peerlink_ce_batch \
  build/peerlink_engine_mix build/peerlink_ring_trace build/peerlink_ce_chain build/peerlink_push_fanout dist/
find build/tests -maxdepth 1 -type f -executable -name '*_test_*' -exec cp {} dist/tests/ \;
(cd build && find tests -name 'libfake_nvml*.so' -exec cp --parents {} ../dist/ \;)
# Tests find fixtures by the absolute source path they were built with; the GPU run links it back.
pwd >dist/SOURCE_DIR
du -sh dist
