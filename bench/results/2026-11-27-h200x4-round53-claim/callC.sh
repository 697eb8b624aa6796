# Session 25 call C: the ring broadcast as n - 1 chains from the root, each beginning at a different rank after
# it (PEERLINK_COLL_BROADCAST_CHAINS=0, the new default) against the one chain along the ring (=1). The ring
# broadcast and ring all-reduce correctness cases (the all-reduce's gather shares the kernel), shared GPUs on
# the rings, the back-to-back ring test; peerlink_ring_trace op=broadcast at 512 MiB both ways alternated;
# the broadcast from 32 MiB to 1 GiB against NCCL, then 512 MiB in fresh processes alternated.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
[ -e dist/peerlink_ring_trace ] || { xz -dc dist/extra/peerlink_ring_trace.xz >dist/peerlink_ring_trace && chmod +x dist/peerlink_ring_trace; }
source scripts/device/call-lib.sh c
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
t correct 200 dist/tests/gpu_test_communicator \
  --gtest_filter='*RING_broadcast*:*RING_all_reduce*:*CE_RING_all_reduce*:*Large*broadcast*:CommunicatorRing.*'
t shared 150 dist/tests/gpu_test_communicator_shared --gtest_filter='Rings/*'
save
for i in 1 2; do
  for chains in 0 1; do
    PEERLINK_COLL_BROADCAST_CHAINS=$chains timeout 60 dist/peerlink_ring_trace op=broadcast cells=4 iterations=20 json=$p/bc-chains$chains-$i.json >$p/bc-chains$chains-$i.txt 2>&1
    echo "bcast trace chains=$chains $i: $? $(grep '^cell' $p/bc-chains$chains-$i.txt | sed 's/.*median \([0-9.]*\).*/\1/' | tr '\n' ' ')"
  done
done
save
timeout 150 dist/peerlink coll -o broadcast -b 32M -e 1G -f 2 --json $p/bc-nccl.json >$p/bc-nccl.txt 2>&1
echo "broadcast 32M-1G vs NCCL: $?"
grep -E '^ +[0-9]+ ' $p/bc-nccl.txt | head -6
save
for i in 1 2 3; do
  for chains in 0 1; do
    PEERLINK_COLL_BROADCAST_CHAINS=$chains timeout 60 dist/peerlink coll -o broadcast -b 512M -e 512M -n 20 --no-nccl --json $p/bc512-chains$chains-$i.json >$p/bc512-chains$chains-$i.txt 2>&1
    echo "bcast 512M chains=$chains $i: $? $(grep -E '^ +536870912' $p/bc512-chains$chains-$i.txt | cut -c1-160)"
  done
done
save
