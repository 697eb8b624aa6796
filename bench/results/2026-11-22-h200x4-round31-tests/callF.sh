# Session 6 call F: GPU tests at 978b8d8 (rings share runRing): shared ranks (all), graph, errors, communicator subsets; ring perf check
export NCCL_NVLS_ENABLE=0
p=/tmp/f; mkdir -p $p
for f in dist/xz/*.xz; do xz -dc $f > dist/tests/$(basename $f .xz); chmod +x dist/tests/$(basename $f .xz); done
save() { tar czf $OUT/f.tar.gz -C /tmp f; }
t() { local name=$1 limit=$2; shift 2; timeout $limit "$@" > $p/$name.txt 2>&1; echo "$name: exit $? $(grep -E '^\[  (PASSED|FAILED) *\]' $p/$name.txt | tr '\n' ' ')"; grep -E "^\[  FAILED  \] [A-Z]" $p/$name.txt | head -5; }
t errors 60 dist/tests/gpu_test_coll_errors --gtest_color=no
t graph 90 dist/tests/gpu_test_coll_graph --gtest_color=no
save
t comm 100 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='Communicator.*:*RING*:*TWOSHOT_broadcast:*TWOSHOT_reduce'
save
t shared 200 dist/tests/gpu_test_communicator_shared --gtest_color=no
save
for c in reduce broadcast; do timeout 30 dist/peerlink coll -o $c -b 128M -e 512M -f 4 --no-nccl > $p/perf-$c.txt 2>&1; echo "$c: $?"; grep -E "^ +[0-9]" $p/perf-$c.txt | tail -2; done
save
