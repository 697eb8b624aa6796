# Session 24 call B: the ring reduce's chains keeping pace (PEERLINK_COLL_RING_PACE). The new GPU test, the
# ring and stall tests; peerlink_ring_trace on fresh buffers per cell with pacing on and off alternated;
# the reduce-scatter and all-reduce at 512 MiB in fresh processes, pacing on and off alternated; both from
# 32 MiB to 1 GiB against NCCL with pacing on. On H200 also send/recv and the reduce against NCCL.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
[ -e dist/peerlink_ring_trace ] || { xz -dc dist/extra/peerlink_ring_trace.xz >dist/peerlink_ring_trace && chmod +x dist/peerlink_ring_trace; }
source scripts/device/call-lib.sh b
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
t pace 120 dist/tests/gpu_test_coll_ring_pace
t ring 200 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorRing.*:CommunicatorTypes.*'
t graph 300 dist/tests/gpu_test_coll_graph
save
for i in 1 2; do
  for pace in 1 0; do
    PEERLINK_COLL_RING_PACE=$pace timeout 90 dist/peerlink_ring_trace cells=12 realloc=1 json=$p/trace-pace$pace-$i.json >$p/trace-pace$pace-$i.txt 2>&1
    echo "trace pace=$pace $i: $? $(grep '^cell' $p/trace-pace$pace-$i.txt | sed 's/.*median \([0-9.]*\).*/\1/' | tr '\n' ' ')"
  done
done
save
for i in 1 2 3; do
  for pace in 1 0; do
    for o in reduce_scatter all_reduce; do
      PEERLINK_COLL_RING_PACE=$pace timeout 60 dist/peerlink coll -o $o -b 512M -e 512M -n 20 --no-nccl --json $p/$o-pace$pace-$i.json >$p/$o-pace$pace-$i.txt 2>&1
      echo "$o pace=$pace $i: $? $(grep -E '^ +536870912' $p/$o-pace$pace-$i.txt | awk '{print $8, $12}' | tr '\n' ' ')"
    done
  done
done
save
for o in reduce_scatter all_reduce; do
  timeout 150 dist/peerlink coll -o $o -b 32M -e 1G -f 2 --json $p/$o-nccl.json >$p/$o-nccl.txt 2>&1
  echo "$o 32M-1G vs NCCL: $?"
  save
done
case "$gpu" in *H200*) ;; *) exit 0 ;; esac
timeout 100 dist/peerlink coll -o send_recv -b 8 -e 1G -f 2 --json $p/coll-send_recv.json >$p/coll-send_recv.txt 2>&1
echo "send_recv 8-1G: $?"
save
timeout 90 dist/peerlink coll -o reduce -b 64M -e 1G -f 2 --json $p/reduce-nccl.json >$p/reduce-nccl.txt 2>&1
echo "reduce 64M-1G: $?"
save
