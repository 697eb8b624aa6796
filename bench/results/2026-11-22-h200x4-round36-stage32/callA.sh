# Session 8 call A (main 0086379 and wip caae4a7): the host-only changes of session 7 on a GPU (coll --explain,
# the step-aside log line, the 64 Mi-element reduce-scatter test), then the ring reduce with a 32 MiB stage
# and 128 blocks (wip) against main's 16 MiB / 64, forced RING, interleaved
p=/tmp/a; mkdir -p $p
for f in dist/xz/*.xz; do xz -dc $f > dist/tests/$(basename $f .xz); chmod +x dist/tests/$(basename $f .xz); done
xz -dc dist/wip/peerlink-stage32.xz > dist/peerlink-stage32; chmod +x dist/peerlink-stage32
dist/peerlink --version; dist/peerlink-stage32 --version
save() { tar czf $OUT/a.tar.gz -C /tmp a; }
t() { local name=$1 limit=$2; shift 2; timeout $limit "$@" > $p/$name.txt 2>&1; echo "$name: exit $? $(grep -E '^\[  (PASSED|FAILED) *\]' $p/$name.txt | tr '\n' ' ')"; grep -E "^\[  FAILED  \] [A-Z]" $p/$name.txt | head -5; }
timeout 30 dist/peerlink coll --explain -o reduce_scatter -b 8 -e 1G -f 4 > $p/explain-rs.txt 2>&1; echo "explain: $?"
timeout 30 dist/peerlink coll --explain -o reduce -b 8 -e 1G -f 4 --json $p/explain-reduce.json > $p/explain-reduce.txt 2>&1; echo "explain json: $?"
PEERLINK_DEBUG_SUBSYS=COLL t stepaside 60 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*RING_reduce_scatter:*RING_all_reduce'
grep -i "steps aside" $p/stepaside.txt | sort | uniq -c | head
t large-rs 120 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*Large*/reduce_scatter*'
save
for pass in 1 2; do
  c=1; [ $pass = 2 ] && c=0
  for o in reduce reduce_scatter all_reduce; do
    b=64M; [ $o != reduce ] && b=256M
    for bin in peerlink peerlink-stage32; do
      PEERLINK_ALGO=RING timeout 60 dist/$bin coll -o $o -b $b -e 1G -f 2 --no-nccl -c $c --json $p/$o-$bin-$pass.json > $p/$o-$bin-$pass.txt 2>&1; echo "$o $bin pass $pass: $?"
    done
    python3 scripts/coll_compare.py $p/$o-peerlink-$pass.json $p/$o-peerlink-stage32-$pass.json 2>&1 | grep -E "^\|"
    save
  done
done
