# Session 16 call D: the deadline test with a ring case (a rank held by a latch: the neighbour start and the
# ready flags give up and name it), the 64 Mi-element broadcast and reduce (now rings under AUTO); on H200s
# also every collective 8 B - 512 MiB and broadcast and reduce 32 MiB - 1 GiB against NCCL.
source scripts/device/call-lib.sh d
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
t deadline 90 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorDeadline.*'
grep -E "^(ONESHOT|TWOSHOT|RING)|after the latch" $p/deadline.txt | cut -c1-400
save
t large 150 dist/tests/gpu_test_communicator --gtest_filter='*Large*broadcast:*Large*reduce'
save
case "$gpu" in
  *H200*)
    for c in all_reduce all_gather all_to_all reduce_scatter broadcast reduce; do
      timeout 100 dist/peerlink coll -o $c -b 8 -e 512M -f 4 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c 8-512M: $?"
      save
    done
    for c in broadcast reduce; do
      timeout 100 dist/peerlink coll -o $c -b 32M -e 1G -f 2 --json $p/large-$c.json >$p/large-$c.txt 2>&1; echo "$c 32M-1G: $?"
      save
    done
    ;;
esac
