# Session 16 call A: the rings' neighbour start (PEERLINK_COLL_RING_NEIGHBOR_START). The back-to-back ring
# test with the final code and with the negative control (control-no-wait.diff: the wait for the next rank's
# start removed, which the test must catch); then forced-ring sweeps with the neighbour start on and off
# (peerlink alone), broadcast and reduce under AUTO against NCCL, and the ring tests.
source scripts/device/call-lib.sh a
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t back-to-back 60 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorRing.*'
t control-no-wait 60 dist/tests/gpu_test_communicator_nowait --gtest_filter='CommunicatorRing.*'
save
sweep() {  # sweep NAME COLLECTIVE FROM ENV...
  local name=$1 coll=$2 from=$3
  shift 3
  env PEERLINK_ALGO=RING "$@" timeout 60 dist/peerlink coll -o $coll -b $from -e 1G -f 2 -n 10 -w 3 -c 0 --no-nccl --json $p/$name.json >$p/$name.txt 2>&1
  echo "$name: $?"
}
for n in 1 0; do
  sweep rd-n$n reduce 4M PEERLINK_COLL_RING_NEIGHBOR_START=$n
  sweep bc-n$n broadcast 4M PEERLINK_COLL_RING_NEIGHBOR_START=$n
  sweep ar-n$n all_reduce 32M PEERLINK_COLL_RING_NEIGHBOR_START=$n
  sweep rs-n$n reduce_scatter 8M PEERLINK_COLL_RING_NEIGHBOR_START=$n
  save
done
for c in reduce broadcast; do
  timeout 150 dist/peerlink coll -o $c -b 4M -e 1G -f 2 --json $p/auto-$c.json >$p/auto-$c.txt 2>&1; echo "auto $c 4M-1G: $?"
  save
done
t comm 150 dist/tests/gpu_test_communicator --gtest_filter='*RING_broadcast:*RING_reduce_scatter:*RING_all_reduce:*RING_reduce'
save
t shared 120 dist/tests/gpu_test_communicator_shared --gtest_filter='Rings/*'
t graph 60 dist/tests/gpu_test_coll_graph
save
