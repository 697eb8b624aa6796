# shellcheck shell=bash
# Sourced by scripts/device/call.sh (and the call scripts kept in bench/results/): `source
# scripts/device/call-lib.sh NAME` from the repository root, with ./dist packed by scripts/device/pack-call.sh.
# It sets up NCCL's environment, the binaries unpacked (unpack-dist.sh), the test executables' build paths linked to
# this checkout, and two helpers. Results go to /tmp/NAME, emptied first (a machine kept warm between calls still
# holds the last call's files there, which a later comparison would read as this call's); `save` packs them into
# $OUT/NAME.tar.gz (only a few files come back from the machine, so save after each step).
call_name=${1:?usage: source scripts/device/call-lib.sh NAME}
p=/tmp/$call_name
rm -rf "$p"
mkdir -p "$p"
export NCCL_NVLS_ENABLE=0  # never NVLink multicast on the shared machines
if [ -z "${PEERLINK_NCCL_LIBRARY:-}" ]; then
  PEERLINK_NCCL_LIBRARY=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))" 2>/dev/null)
  export PEERLINK_NCCL_LIBRARY
fi
scripts/device/unpack-dist.sh  # what pack-call.sh compressed: the CLI, the NCCL library, the test executables
if [ -x dist/peerlink ]; then
  dist/peerlink --version
else  # a call of NCCL libraries alone may leave the CLI out (the carry limit): each library's VERSION says its build
  echo "dist/peerlink not carried"
fi
# Test executables find fixtures and helpers by the paths they were built with (as run-gpu-tests.sh does).
source_dir=$(cat dist/SOURCE_DIR)
if [ "$source_dir" != "$PWD" ] && [ ! -e "$source_dir" ]; then
  mkdir -p "$(dirname "$source_dir")" && ln -sfn "$PWD" "$source_dir"
fi
[ -e build ] || ln -sfn dist build
# Another build's tests (pack-call.sh's PACK_ALT_TESTS): their source folder this checkout, their build's NCCL
# library the one carried beside them.
for alt_source in dist/*/SOURCE_DIR; do
  [ -e "$alt_source" ] || continue
  alt=$(dirname "$alt_source")
  source_dir=$(cat "$alt_source")
  if [ -n "$source_dir" ] && [ "$source_dir" != "$PWD" ] && [ ! -e "$source_dir/build/nccl_api" ]; then
    mkdir -p "$source_dir/build"
    for part in tests examples scripts src python; do
      [ -e "$source_dir/$part" ] || ln -sfn "$PWD/$part" "$source_dir/$part"
    done
    ln -sfn "$PWD/$alt/nccl_api" "$source_dir/build/nccl_api"
  fi
done

save() { tar czf "$OUT/$call_name.tar.gz" -C /tmp "$call_name"; }

# t NAME LIMIT_S COMMAND...: runs a gtest executable into $p/NAME.txt and prints its verdict and failures.
t() {
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$p/$name.txt" 2>&1
  echo "$name: exit $? $(grep -E '^\[  (PASSED|FAILED) *\]' "$p/$name.txt" | tr '\n' ' ')$(grep -E '^\[==========\]' "$p/$name.txt" | tail -1)"
  grep -E "^\[  FAILED  \] [A-Z]" "$p/$name.txt" | head -5
}
