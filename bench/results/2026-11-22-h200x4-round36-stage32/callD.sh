# Session 8 call D (main 8e0b47d: ring reduce on 128 blocks with a 32 MiB stage, rings' crossovers moved):
# the collective GPU tests, then reduce and reduce-scatter 64 MiB - 1 GiB AUTO with NCCL in the same run
export NCCL_NVLS_ENABLE=0
export PEERLINK_NCCL_LIBRARY=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))")
p=/tmp/d; mkdir -p $p
for f in dist/xz/*.xz; do xz -dc $f > dist/tests/$(basename $f .xz); chmod +x dist/tests/$(basename $f .xz); done
dist/peerlink --version
save() { tar czf $OUT/d.tar.gz -C /tmp d; }
t() { local name=$1 limit=$2; shift 2; timeout $limit "$@" > $p/$name.txt 2>&1; echo "$name: exit $? $(grep -E '^\[  (PASSED|FAILED) *\]' $p/$name.txt | tr '\n' ' ') $(grep -E '^\[==========\]' $p/$name.txt | tail -1)"; grep -E "^\[  FAILED  \] [A-Z]" $p/$name.txt | head -5; }
t errors 60 dist/tests/gpu_test_coll_errors --gtest_color=no
t graph 90 dist/tests/gpu_test_coll_graph --gtest_color=no
save
t comm 200 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*AUTO_*:*RING*:*TWOSHOT_reduce:*TWOSHOT_broadcast:CommunicatorTwoShotReduce.*:*Large*'
save
t shared 150 dist/tests/gpu_test_communicator_shared --gtest_color=no
save
for o in reduce reduce_scatter; do
  [ $SECONDS -gt 430 ] && { echo "skipped $o (time)"; continue; }
  timeout 110 dist/peerlink coll -o $o -b 64M -e 1G -f 2 --json $p/large-$o.json > $p/large-$o.txt 2>&1; echo "large $o: $?"
  python3 scripts/coll_compare.py $p/large-$o.json 2>&1 | grep -E "^\|"
  save
done
