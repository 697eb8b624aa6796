# Session 10 call C (main, programmatic dependent launch): the graph tests (incl. the new back-to-back
# test), send/recv (always launched directly), then peerlink alone with PEERLINK_COLL_PDL=0 and 1 in one
# call: all-reduce 8 B - 256 KiB with 200 iterations per graph, every collective 8 B - 4 MiB with 20
source scripts/device/call-lib.sh c
t graph 200 dist/tests/gpu_test_coll_graph
save
t sendrecv 100 dist/tests/gpu_test_communicator --gtest_filter='*AUTO_send_recv:*RanksMayRunAhead*:*AUTO_all_reduce'
save
for pdl in 0 1; do
  PEERLINK_COLL_PDL=$pdl timeout 60 dist/peerlink coll -o all_reduce -b 8 -e 256K -f 4 -n 200 --no-nccl --json $p/ar-n200-pdl$pdl.json > $p/ar-n200-pdl$pdl.txt 2>&1; echo "ar n200 pdl=$pdl: $?"
done
save
for c in all_reduce all_gather reduce_scatter all_to_all broadcast reduce; do
  for pdl in 0 1; do
    PEERLINK_COLL_PDL=$pdl timeout 60 dist/peerlink coll -o $c -b 8 -e 4M -f 4 --no-nccl --json $p/$c-pdl$pdl.json > $p/$c-pdl$pdl.txt 2>&1; echo "$c pdl=$pdl: $?"
  done
  save
done
