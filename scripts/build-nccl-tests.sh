#!/usr/bin/env bash
# Builds NVIDIA's nccl-tests from a source folder (fetched, never committed) against the CUDA toolkit's NCCL
# headers, with MPI, for the device machines' GPUs, and packs the binaries for scripts/device/run-nccl-api.sh:
# dist/nccl-tests/NAME_perf.xz (stripped, compressed: the carry limit is 64 MiB) and the CUDA runtime they load
# (libcudart.so.13), which run-nccl-api.sh unpacks beside them. Needs libopenmpi-dev.
# usage: scripts/build-nccl-tests.sh NCCL_TESTS_SOURCE [COMPUTE_CAPABILITY]     (capability: 90)
set -euo pipefail
source=${1:?usage: scripts/build-nccl-tests.sh NCCL_TESTS_SOURCE [COMPUTE_CAPABILITY]}
arch=${2:-90}
cd "$(dirname "$0")/.."
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
make -C "$source" -j "$(nproc)" MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME="$cuda" NCCL_HOME="$cuda" \
  NVCC_GENCODE="-gencode=arch=compute_$arch,code=sm_$arch" >/dev/null
rm -rf dist/nccl-tests
mkdir -p dist/nccl-tests
for binary in "$source"/build/*_perf; do
  strip -o "dist/nccl-tests/$(basename "$binary")" "$binary"
  xz -T2 -6 -f "dist/nccl-tests/$(basename "$binary")"
done
cp -L "$cuda/lib64/libcudart.so.13" dist/nccl-tests/
xz -T2 -6 -f dist/nccl-tests/libcudart.so.13
du -sh dist/nccl-tests
