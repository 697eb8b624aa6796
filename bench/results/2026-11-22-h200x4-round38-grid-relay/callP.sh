# Session 9 call P (main 2ec046f): the two-shot reduce's non-root layout from 4 MiB on 32 blocks, two-shot
# broadcasts on 32 blocks from 4 MiB (rootedTwoShotBlocks): the reduce and broadcast GPU tests, then both
# collectives from 1 to 128 MiB with NCCL in the same run
source scripts/device/call-lib.sh p
t twoshot 150 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorTwoShotReduce.*:*TWOSHOT_reduce:*TWOSHOT_broadcast:*AUTO_reduce:*AUTO_broadcast'
save
t shared 150 dist/tests/gpu_test_communicator_shared --gtest_filter='*TWOSHOT_reduce:*TWOSHOT_broadcast:*AUTO_reduce:*AUTO_broadcast'
save
for c in reduce broadcast; do
  timeout 120 dist/peerlink coll -o $c -b 1M -e 128M -f 2 --json $p/coll-$c.json > $p/coll-$c.txt 2>&1; echo "coll $c: $?"
  python3 scripts/coll_compare.py $p/coll-$c.json | tee $p/compare-$c.md
  save
done
