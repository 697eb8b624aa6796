# Session 17 call D: the last 14 of gpu_test_communicator's tests on the final code (calls B and C ran the
# other 70 before their time ran out), then the small all-reduce in 200-call graphs and all-reduce and
# reduce 8 B - 512 MiB against NCCL (the barrier's halves are now shared helpers: any cost would show there).
source scripts/device/call-lib.sh d
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t comm-last 300 dist/tests/gpu_test_communicator --gtest_filter='EveryAlgorithm/CommunicatorCorrectness.MatchesHostReference/CE_RING_all_reduce:EveryAlgorithm/CommunicatorCorrectness.MatchesHostReference/CE_RING_broadcast:EveryAlgorithm/CommunicatorCorrectness.MatchesHostReference/CE_RING_reduce:EveryAlgorithm/CommunicatorCorrectness.MatchesHostReference/CE_RING_all_gather:EveryAlgorithm/CommunicatorCorrectness.MatchesHostReference/CE_RING_reduce_scatter:EveryAlgorithm/CommunicatorCorrectness.MatchesHostReference/CE_RING_all_to_all:EveryAlgorithm/CommunicatorCorrectness.MatchesHostReference/CE_RING_send_recv:EveryCollective/CommunicatorLarge.SixtyFourMillionElements/all_reduce:EveryCollective/CommunicatorLarge.SixtyFourMillionElements/broadcast:EveryCollective/CommunicatorLarge.SixtyFourMillionElements/reduce:EveryCollective/CommunicatorLarge.SixtyFourMillionElements/all_gather:EveryCollective/CommunicatorLarge.SixtyFourMillionElements/reduce_scatter:EveryCollective/CommunicatorLarge.SixtyFourMillionElements/all_to_all:EveryCollective/CommunicatorLarge.SixtyFourMillionElements/send_recv'
save
timeout 60 dist/peerlink coll -o all_reduce -b 8 -e 64K -f 2 -n 200 --json $p/coll-all_reduce-n200.json >$p/coll-all_reduce-n200.txt 2>&1; echo "ar n200: $?"
save
for c in all_reduce reduce; do
  timeout 100 dist/peerlink coll -o $c -b 8 -e 512M -f 4 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c 8-512M: $?"
  save
done
