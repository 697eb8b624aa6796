#!/usr/bin/env bash
# On a GPU machine (device tool), from the repository root with ./dist carried (scripts/make-dist.sh):
# runs every test executable, cpu and gpu, writing their logs into $OUT/test-logs.tar.gz (the device
# tool returns few files) and a summary line each to stdout. Test executables find fixtures and helper libraries by the absolute paths they were built
# with (source dir and build dir), so those paths are made to point at this checkout and ./dist.
set -uo pipefail
scripts/device/unpack-dist.sh  # what pack-call.sh carried compressed
out=$(mktemp -d)
source_dir=$(cat dist/SOURCE_DIR)
if [ "$source_dir" != "$PWD" ] && [ ! -e "$source_dir" ]; then
  mkdir -p "$(dirname "$source_dir")" && ln -sfn "$PWD" "$source_dir"
fi
[ -e build ] || ln -sfn dist build
failed=0
for test in dist/tests/*_test_*; do
  [ -x "$test" ] || continue
  name=$(basename "$test")
  if "$test" --gtest_color=no >"$out/$name.log" 2>&1; then result=ok; else result=FAILED; failed=1; fi
  summary=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) *\] [0-9]+ test' "$out/$name.log" | tr '\n' ' ')
  echo "$name: $result  $summary"
done
tar -czf "${OUT:-/tmp}/test-logs.tar.gz" -C "$out" .
exit $failed
