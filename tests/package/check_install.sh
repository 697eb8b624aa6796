#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds a separate program against it twice: through
# find_package(peerlink CONFIG) and through pkg-config; both must run. Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$source/tests/package/consumer" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer" "$work/prefix/share/peerlink/examples/topologies/h200x4_vm.json"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
c++ -std=c++17 -o "$work/pkg-consumer" "$source/tests/package/consumer/main.cc" $(pkg-config --cflags --libs peerlink)
"$work/pkg-consumer" "$work/prefix/share/peerlink/examples/topologies/h200x4_vm.json"
echo "install, find_package and pkg-config: OK"
