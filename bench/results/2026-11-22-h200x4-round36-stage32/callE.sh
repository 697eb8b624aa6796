# Session 8 call E (main 8e0b47d): the tests call D's budget cut short (the 64 Mi-element reduce-scatter,
# the shared-GPU tests after 8ranks_PUSH_reduce), all-reduce 64 MiB - 1 GiB AUTO with NCCL, small
# all-reduces captured per rank against the joined graph
export NCCL_NVLS_ENABLE=0
export PEERLINK_NCCL_LIBRARY=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))")
p=/tmp/e; mkdir -p $p
for f in dist/xz/*.xz; do xz -dc $f > dist/tests/$(basename $f .xz); chmod +x dist/tests/$(basename $f .xz); done
dist/peerlink --version
save() { tar czf $OUT/e.tar.gz -C /tmp e; }
t() { local name=$1 limit=$2; shift 2; timeout $limit "$@" > $p/$name.txt 2>&1; echo "$name: exit $? $(grep -E '^\[  (PASSED|FAILED) *\]' $p/$name.txt | tr '\n' ' ') $(grep -E '^\[==========\]' $p/$name.txt | tail -1)"; grep -E "^\[  FAILED  \] [A-Z]" $p/$name.txt | head -5; }
t large-rs 90 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*Large*/reduce_scatter'
t shared-rest 120 dist/tests/gpu_test_communicator_shared --gtest_color=no --gtest_filter='Rings/*:*8ranks_PUSH_reduce_scatter:*8ranks_PUSH_all_to_all:*8ranks_PUSH_send_recv'
save
timeout 110 dist/peerlink coll -o all_reduce -b 64M -e 1G -f 2 --json $p/large-all_reduce.json > $p/large-all_reduce.txt 2>&1; echo "large all_reduce: $?"
python3 scripts/coll_compare.py $p/large-all_reduce.json 2>&1 | grep -E "^\|"
save
for c in joined per-rank; do
  timeout 60 dist/peerlink coll -o all_reduce -b 8 -e 64K -f 4 -n 200 -w 50 -c 0 --no-nccl --capture $c --json $p/small-$c.json > $p/small-$c.txt 2>&1; echo "small $c: $?"
done
python3 scripts/coll_graph_times.py $p/small-joined.json $p/small-per-rank.json
save
