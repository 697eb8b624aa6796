# Session 18 call C (the build of call B): where the ring reduce now overtakes the two-shot reduce (forced
# RING against forced TWOSHOT, 4-32 MiB, alternated twice, no NCCL), and the large AUTO cases that run the
# ring reduce kernel (64 Mi elements: reduce, reduce-scatter, all-reduce).
source scripts/device/call-lib.sh c
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for round in 1 2; do
  for algo in RING TWOSHOT; do
    PEERLINK_ALGO=$algo timeout 40 dist/peerlink coll -o reduce -b 4M -e 32M -f 2 -n 20 -w 5 -c 0 --no-nccl --json $p/reduce-$algo-$round.json >$p/reduce-$algo-$round.txt 2>&1; echo "reduce $algo $round: $?"
  done
done
save
t large 200 dist/tests/gpu_test_communicator --gtest_filter='EveryCollective/CommunicatorLarge.SixtyFourMillionElements/reduce:EveryCollective/CommunicatorLarge.SixtyFourMillionElements/reduce_scatter:EveryCollective/CommunicatorLarge.SixtyFourMillionElements/all_reduce'
save
