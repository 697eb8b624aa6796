# Session 6 call D: ring reduce on its 64-block grid from 128 MiB (tests), reduce 8 B - 1 GiB with NCCL
export NCCL_NVLS_ENABLE=0
export PEERLINK_NCCL_LIBRARY=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))")
p=/tmp/d; mkdir -p $p
save() { tar czf $OUT/d.tar.gz -C /tmp d; }
t() { local name=$1 limit=$2; shift 2; timeout $limit "$@" > $p/$name.txt 2>&1; echo "$name: exit $? $(grep -E '^\[  (PASSED|FAILED) *\]' $p/$name.txt | tr '\n' ' ')"; grep -E "^\[  FAILED  \] [A-Z]" $p/$name.txt | head -5; }
t comm 100 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*RING_reduce*:*AUTO_reduce*:*Large*/reduce'
t shared 100 dist/tests/gpu_test_communicator_shared --gtest_color=no --gtest_filter='Rings*reduce*:*AUTO_reduce*'
save
timeout 200 dist/peerlink coll -o reduce -b 8 -e 1G -f 4 --json $p/reduce-full.json > $p/reduce-full.txt 2>&1; echo "reduce full: $?"
python3 scripts/coll_compare.py $p/reduce-full.json 2>&1 | grep -E "^\|"
save
