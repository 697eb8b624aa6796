# Session 10 call F (main: as call E, LL blocks of 256 threads at every size): graph, shared-rank,
# error and AUTO/ONESHOT correctness tests, then peerlink against NCCL in the same run: all-reduce
# 8 B - 256 KiB with 200 iterations per graph, every collective 8 B - 4 MiB with 20
source scripts/device/call-lib.sh f
t graph 120 dist/tests/gpu_test_coll_graph
save
t errors 60 dist/tests/gpu_test_coll_errors
t shared 100 dist/tests/gpu_test_communicator_shared --gtest_filter='*AUTO_all_reduce*:*AUTO_send_recv*:*AUTO_reduce_scatter*'
save
t auto 200 dist/tests/gpu_test_communicator --gtest_filter='*AUTO_all_reduce:*AUTO_send_recv:*AUTO_all_gather:*ONESHOT_reduce:*RanksMayRunAhead*'
save
timeout 120 dist/peerlink coll -o all_reduce -b 8 -e 256K -f 4 -n 200 --json $p/ar-n200.json > $p/ar-n200.txt 2>&1; echo "ar n200: $?"
python3 scripts/coll_compare.py $p/ar-n200.json | tee $p/compare-ar-n200.md
save
for c in all_reduce all_gather reduce_scatter all_to_all broadcast reduce; do
  timeout 100 dist/peerlink coll -o $c -b 8 -e 4M -f 4 --json $p/coll-$c.json > $p/coll-$c.txt 2>&1; echo "coll $c: $?"
  save
done
