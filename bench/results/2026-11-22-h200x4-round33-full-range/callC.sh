# Session 7 call C: GPU tests at 10a888e (ring all-reduce AUTO from 256 MiB, 16-round ring chunks, root shard below 16 MiB)
export NCCL_NVLS_ENABLE=0
p=/tmp/c; mkdir -p $p
for f in dist/xz/*.xz; do xz -dc $f > dist/tests/$(basename $f .xz); chmod +x dist/tests/$(basename $f .xz); done
dist/peerlink --version
save() { tar czf $OUT/c.tar.gz -C /tmp c; }
t() { local name=$1 limit=$2; shift 2; timeout $limit "$@" > $p/$name.txt 2>&1; echo "$name: exit $? $(grep -E '^\[  (PASSED|FAILED) *\]' $p/$name.txt | tr '\n' ' ')"; grep -E "^\[  FAILED  \] [A-Z]" $p/$name.txt | head -5; }
t errors 60 dist/tests/gpu_test_coll_errors --gtest_color=no
t graph 90 dist/tests/gpu_test_coll_graph --gtest_color=no
save
t comm 200 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*AUTO_*:*RING*:*TWOSHOT_reduce:*TWOSHOT_broadcast:CommunicatorTwoShotReduce.*:*Large*'
save
t shared 190 dist/tests/gpu_test_communicator_shared --gtest_color=no
save
