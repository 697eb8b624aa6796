# Session 10 call A (main cda2dc7): the ring reduce on 32 claiming blocks (merged in session 9, not yet run
# on a GPU at this commit): the ring GPU tests, the shared-rank ring tests, the error tests, then reduce and
# broadcast from 32 MiB to 1 GiB with NCCL in the same run
source scripts/device/call-lib.sh a
t ring 200 dist/tests/gpu_test_communicator --gtest_filter='*RING*:*Large*:*AUTO_reduce*'
save
t shared 150 dist/tests/gpu_test_communicator_shared --gtest_filter='*RING*'
save
t errors 100 dist/tests/gpu_test_coll_errors
save
for c in reduce broadcast; do
  timeout 150 dist/peerlink coll -o $c -b 32M -e 1G -f 2 --json $p/coll-$c.json > $p/coll-$c.txt 2>&1; echo "coll $c: $?"
  python3 scripts/coll_compare.py $p/coll-$c.json | tee $p/compare-$c.md
  save
done
