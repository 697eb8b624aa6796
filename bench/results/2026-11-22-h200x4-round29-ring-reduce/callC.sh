# Session 6 call C: ring reduce first run (tests, forced ring vs two-shot, grid cap), ring broadcast after the refactor
export NCCL_NVLS_ENABLE=0
export PEERLINK_NCCL_LIBRARY=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))")
p=/tmp/c; mkdir -p $p
save() { tar czf $OUT/c.tar.gz -C /tmp c; }
t() { local name=$1 limit=$2; shift 2; timeout $limit "$@" > $p/$name.txt 2>&1; echo "$name: exit $? $(grep -E '^\[  (PASSED|FAILED) *\]' $p/$name.txt | tr '\n' ' ')"; grep -E "^\[  FAILED  \] [A-Z]" $p/$name.txt | head -5; }
t comm 120 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*RING_reduce*:*RING_broadcast*:*AUTO_reduce*:*TWOSHOT_reduce*:*AUTO_broadcast*'
save
t shared 150 dist/tests/gpu_test_communicator_shared --gtest_color=no --gtest_filter='Rings*'
save
t large 60 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*Large*/reduce:*Large*/broadcast'
save
for a in RING TWOSHOT; do PEERLINK_ALGO=$a timeout 60 dist/peerlink coll -o reduce -b 8M -e 1G -f 2 --no-nccl --json $p/reduce-$a.json > $p/reduce-$a.txt 2>&1; echo "reduce $a: $?"; done
python3 scripts/coll_compare.py $p/reduce-TWOSHOT.json $p/reduce-RING.json 2>&1 | grep -E "^\|"
save
for b in 32 64; do PEERLINK_COLL_MAX_BLOCKS=$b PEERLINK_ALGO=RING timeout 40 dist/peerlink coll -o reduce -b 32M -e 1G -f 4 --no-nccl --json $p/reduce-ring-b$b.json > $p/reduce-ring-b$b.txt 2>&1; done
python3 scripts/coll_compare.py $p/reduce-RING.json $p/reduce-ring-b32.json $p/reduce-ring-b64.json 2>&1 | grep -E "^\|"
save
timeout 120 dist/peerlink coll -o reduce -b 64M -e 1G -f 2 --json $p/reduce-auto.json > $p/reduce-auto.txt 2>&1; echo "reduce auto: $?"
timeout 120 dist/peerlink coll -o broadcast -b 64M -e 1G -f 2 --json $p/bcast-auto.json > $p/bcast-auto.txt 2>&1; echo "bcast auto: $?"
python3 scripts/coll_compare.py $p/reduce-auto.json 2>&1 | grep -E "^\|"
python3 scripts/coll_compare.py $p/bcast-auto.json 2>&1 | grep -E "^\|"
save
