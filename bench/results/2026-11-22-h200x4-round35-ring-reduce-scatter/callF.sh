# Session 7 call F: the ring reduce-scatter at cb139e8: tests, then forced RING against the direct reads
# (ONESHOT) 16 MiB - 1 GiB, then AUTO with NCCL 64 MiB - 1 GiB
export NCCL_NVLS_ENABLE=0
export PEERLINK_NCCL_LIBRARY=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))")
p=/tmp/f; mkdir -p $p
for f in dist/xz/*.xz; do xz -dc $f > dist/tests/$(basename $f .xz); chmod +x dist/tests/$(basename $f .xz); done
dist/peerlink --version
save() { tar czf $OUT/f.tar.gz -C /tmp f; }
t() { local name=$1 limit=$2; shift 2; timeout $limit "$@" > $p/$name.txt 2>&1; echo "$name: exit $? $(grep -E '^\[  (PASSED|FAILED) *\]' $p/$name.txt | tr '\n' ' ')"; grep -E "^\[  FAILED  \] [A-Z]" $p/$name.txt | head -5; }
t comm 70 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*RING_reduce_scatter:*AUTO_reduce_scatter:*Large*/reduce_scatter'
t shared 60 dist/tests/gpu_test_communicator_shared --gtest_color=no --gtest_filter='Rings*reduce_scatter*'
save
for a in RING ONESHOT; do PEERLINK_ALGO=$a timeout 40 dist/peerlink coll -o reduce_scatter -b 16M -e 1G -f 2 --no-nccl --json $p/rs-$a.json > $p/rs-$a.txt 2>&1; echo "rs $a: $?"; done
python3 scripts/coll_compare.py $p/rs-ONESHOT.json $p/rs-RING.json 2>&1 | grep -E "^\|"
save
timeout 80 dist/peerlink coll -o reduce_scatter -b 64M -e 1G -f 2 --json $p/rs-auto.json > $p/rs-auto.txt 2>&1; echo "rs auto: $?"
python3 scripts/coll_compare.py $p/rs-auto.json 2>&1 | grep -E "^\|"
save
