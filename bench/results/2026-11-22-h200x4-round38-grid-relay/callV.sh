# Session 9 call V (wip/ring-claim 89a6ee3): the ring reduce's blocks claim chunks as they go. Forced rings
# against call S's (same machine kind, main's static assignment), AUTO reduce with NCCL, then the ring tests
source scripts/device/call-lib.sh v
for c in reduce reduce_scatter; do
  PEERLINK_ALGO=RING timeout 60 dist/peerlink coll -o $c -b 16M -e 512M -f 2 --no-nccl --json $p/ring-$c.json > $p/ring-$c.txt 2>&1
  echo "ring $c: exit $? $(grep -E '^ +[0-9]+ ' $p/ring-$c.txt | awk '{printf "%s ", $6}' | head -c 300)"
done
PEERLINK_ALGO=RING timeout 60 dist/peerlink coll -o all_reduce -b 64M -e 512M -f 2 --no-nccl --json $p/ring-all_reduce.json > $p/ring-all_reduce.txt 2>&1
echo "ring all_reduce: exit $? $(grep -E '^ +[0-9]+ ' $p/ring-all_reduce.txt | awk '{printf "%s ", $6}' | head -c 300)"
save
timeout 150 dist/peerlink coll -o reduce -b 32M -e 1G -f 2 --json $p/reduce.json > $p/reduce.txt 2>&1; echo "reduce with NCCL: $?"
python3 scripts/coll_compare.py $p/reduce.json
save
t ring 150 dist/tests/gpu_test_communicator --gtest_filter='*RING_reduce*:*RING_all_reduce:*RING_reduce_scatter:EveryCollective/CommunicatorLarge.*/reduce'
save
t shared 100 dist/tests/gpu_test_communicator_shared --gtest_filter='*RING_reduce*:*RING_all_reduce:*RING_reduce_scatter'
save
t errors 60 dist/tests/gpu_test_coll_errors
save
