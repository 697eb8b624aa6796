#!/usr/bin/env bash
# Formatting check (clang-format, .clang-format). With --tidy also clang-tidy over the library and CLI
# sources (slower; needs build/compile_commands.json from scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.hpp' '*.h' '*.cu' '*.cuh')
clang-format --dry-run --Werror "${files[@]}"
if [ "${1:-}" = "--tidy" ]; then
  mapfile -t sources < <(git ls-files 'src/*.cc' 'tools/*.cc')
  clang-tidy -p build --quiet "${sources[@]}"
fi
