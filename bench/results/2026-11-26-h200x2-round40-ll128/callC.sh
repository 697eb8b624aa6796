# Session 12 call C on nvidia-h200-x2: the LL and LL128 kernels with runtime rank loops, reductions folded
# in rank order (PackReducer) and the byte-wise payload paths out of line (new), against call A's binary
# (commit 670caa4, old) in the same run: all-reduce on one GPU (the kernel's own path) and on two, every
# collective on two; then the tests of the changed kernels.
source scripts/device/call-lib.sh c
old=dist/peerlink-670caa4
t sanity 120 dist/tests/gpu_test_coll_ll128
t proto 200 dist/tests/gpu_test_communicator --gtest_filter='*PROTO_LL_all_reduce*:*PROTO_LL128_all_reduce*'
save
for g in 1 2; do
  for bin in old new; do
    b=dist/peerlink; [ $bin = old ] && b=$old
    for proto in LL LL128; do
      PEERLINK_PROTO=$proto timeout 60 $b coll --no-nccl -g $g -o all_reduce -b 8 -e 1M -f 4 -n 200 --json $p/g$g-ar-$proto-$bin.json >$p/g$g-ar-$proto-$bin.txt 2>&1 || echo "g$g $bin $proto failed"
    done
  done
  python3 scripts/coll_graph_times.py $p/g$g-ar-*.json | tee $p/times-g$g-all_reduce.txt
done
save
for c in all_gather reduce_scatter broadcast reduce all_to_all; do
  for run in LL-old LL-new LL128-new; do
    b=dist/peerlink; [ ${run#*-} = old ] && b=$old
    PEERLINK_PROTO=${run%-*} timeout 40 $b coll --no-nccl -o $c -b 1K -e 1M -f 4 -n 100 --json $p/$c-$run.json >$p/$c-$run.txt 2>&1 || echo "$c $run failed"
  done
  python3 scripts/coll_graph_times.py $p/$c-*.json | tee $p/times-$c.txt
done
save
t errors 90 dist/tests/gpu_test_coll_errors
t graph 90 dist/tests/gpu_test_coll_graph
t communicator 240 dist/tests/gpu_test_communicator --gtest_filter='*PROTO_LL*:*AUTO*:*ONESHOT*:*Eager*:*RanksMayRunAhead*'
save
t shared 150 dist/tests/gpu_test_communicator_shared --gtest_filter='*AUTO*:*LL128*'
save
