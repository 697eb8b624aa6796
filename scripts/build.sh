#!/usr/bin/env bash
# Installs what is missing (Debian/Ubuntu packages), then configures and builds peerlink in ./build.
# Needs the CUDA toolkit (nvcc) already installed. Extra arguments go to CMake's configure step,
# e.g. ./scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=90
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ pkg-config git libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev
          clang-format clang-tidy chromium ccache libopenmpi-dev openmpi-bin)
./scripts/install-missing.sh "${packages[@]}"

if ! command -v nvcc >/dev/null 2>&1; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  else
    echo "peerlink: nvcc not found: install the CUDA toolkit (12.5 or newer) and put nvcc on PATH" >&2
    exit 1
  fi
fi

# ccache keeps compiled objects between builds (CI on this machine reuses the cache of earlier runs).
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
export CCACHE_BASEDIR="$PWD"  # paths below the checkout hash the same in every clone
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPEERLINK_WERROR=ON "${launcher[@]}" "$@" >/dev/null
cmake --build build -j "$(nproc)"
