#!/usr/bin/env bash
# Collectives on the device machine, from the repository root with ./dist carried: the communicator's
# GPU tests (3-8 ranks sharing the GPUs too; the deadline test in its own process) and `peerlink coll` for every collective against
# PyTorch's NCCL in the same run. Logs and JSON go to $OUT; a summary is printed.
set -uo pipefail
scripts/device/unpack-dist.sh  # what pack-call.sh carried compressed
out=${OUT:-/tmp/peerlink-coll}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0  # never NVLink multicast on the shared machines
if [ -z "${PEERLINK_NCCL_LIBRARY:-}" ]; then
  PEERLINK_NCCL_LIBRARY=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))" 2>/dev/null)
  export PEERLINK_NCCL_LIBRARY
fi
source_dir=$(cat dist/SOURCE_DIR)
if [ "$source_dir" != "$PWD" ] && [ ! -e "$source_dir" ]; then
  mkdir -p "$(dirname "$source_dir")" && ln -sfn "$PWD" "$source_dir"
fi
[ -e build ] || ln -sfn dist build
t() {  # t <log name> <timeout s> <command...>
  local name=$1 limit=$2; shift 2
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  echo "$name: exit $? $(grep -E '^\[  (PASSED|FAILED) *\]' "$out/$name.log" | tr '\n' ' ')"
}
if [ "${COLL_TESTS:-1}" = 1 ]; then
  t coll_errors 120 dist/tests/gpu_test_coll_errors --gtest_color=no
  t communicator 300 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='-CommunicatorLarge.*'
  t communicator_large 200 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*CommunicatorLarge*'
  t communicator_two_shot 300 dist/tests/gpu_test_communicator_two_shot --gtest_color=no
  t communicator_shared 400 dist/tests/gpu_test_communicator_shared --gtest_color=no
  t coll_graph 200 dist/tests/gpu_test_coll_graph --gtest_color=no --gtest_filter='-CommunicatorDeadline.*'
  t coll_deadline 60 dist/tests/gpu_test_coll_graph --gtest_color=no --gtest_filter='CommunicatorDeadline.*'
  t coll_bench_test 200 dist/tests/gpu_test_coll_bench --gtest_color=no
  tar -czf "$out/coll-test-logs.tar.gz" -C "$out" $(cd "$out" && ls *.log) && rm -f "$out"/*.log
fi
for c in ${COLL_LIST:-all_reduce all_gather reduce_scatter all_to_all broadcast reduce}; do
  timeout 240 dist/peerlink coll -o "$c" -b 8 -e "${COLL_MAX:-512M}" -f "${COLL_FACTOR:-4}" --json "$out/coll-$c.json" \
    >"$out/coll-$c.txt" 2>&1
  echo "coll $c: exit $?"
done
