# Session 7 call A: the three WIP branches together (integ) against main ce1ae05: tests, then reduce
# 256K-64M (root shard), RING broadcast/reduce 8M-128M (batched signal), all-reduce RING vs split 64M-1G.
export NCCL_NVLS_ENABLE=0
p=/tmp/a; mkdir -p $p
save() { tar czf $OUT/a.tar.gz -C /tmp a; }
for f in dist/xz/*.xz; do xz -dc $f > dist/tests/$(basename $f .xz); chmod +x dist/tests/$(basename $f .xz); done
xz -dc dist/wip/peerlink-main.xz > dist/wip/peerlink-main; chmod +x dist/wip/peerlink-main
dist/peerlink --version; dist/wip/peerlink-main --version
t() { local name=$1 limit=$2; shift 2; timeout $limit "$@" > $p/$name.txt 2>&1; echo "$name: exit $? $(grep -E '^\[  (PASSED|FAILED) *\]' $p/$name.txt | tr '\n' ' ')"; grep -E "^\[  FAILED  \] [A-Z]" $p/$name.txt | head -5; }
t comm 150 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*RING_*:CommunicatorTwoShotReduce.*:*TWOSHOT_reduce*:*AUTO_reduce*'
save
PEERLINK_ALGO=RING t large-ring 80 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*Large*/all_reduce'
t large 60 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*Large*/reduce'
save
t shared 130 dist/tests/gpu_test_communicator_shared --gtest_color=no --gtest_filter='Rings*'
save
c() { local name=$1 bin=$2; shift 2; timeout 60 $bin coll --no-nccl --json $p/$name.json "$@" > $p/$name.txt 2>&1; echo "$name: $?"; }
for v in main integ; do b=dist/peerlink; [ $v = main ] && b=dist/wip/peerlink-main
  c reduce-$v $b -o reduce -b 256K -e 64M -f 2; done
python3 scripts/coll_compare.py $p/reduce-main.json $p/reduce-integ.json 2>&1 | grep -E "^\|"
save
for o in broadcast reduce; do for v in main integ; do b=dist/peerlink; [ $v = main ] && b=dist/wip/peerlink-main
  PEERLINK_ALGO=RING c ring-$o-$v $b -o $o -b 8M -e 128M -f 2; done
  python3 scripts/coll_compare.py $p/ring-$o-main.json $p/ring-$o-integ.json 2>&1 | grep -E "^\|"; done
save
PEERLINK_ALGO=RING c ar-ring dist/peerlink -o all_reduce -b 64M -e 1G -f 2
c ar-auto dist/peerlink -o all_reduce -b 64M -e 1G -f 2
python3 scripts/coll_compare.py $p/ar-auto.json $p/ar-ring.json 2>&1 | grep -E "^\|"
save
