#!/bin/bash
scripts/device/unpack-dist.sh >/dev/null
DDP_ROUNDS=1 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3" DDP_RUNS="nccl ring ring16:PEERLINK_COLL_ARENA_RING_SHAPE=16x256K ringoff:PEERLINK_COLL_ARENA_RING=OFF" scripts/device/run-nccl-api.sh ddp 2 > /tmp/ddpp.log 2>&1
cp /tmp/ddpp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddpp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz; grep -E "median step|mean / NCCL" /tmp/ddpp.log | cut -c1-400
steps=()
for op in all_gather reduce_scatter broadcast reduce all_to_all; do
  steps+=("PEERLINK_COLL_SHARE_BUFFERS=OFF coll $op-ring 60 --procs 2 -o $op -b 2M -e 512M -f 4")
  steps+=("PEERLINK_COLL_SHARE_BUFFERS=OFF PEERLINK_COLL_ARENA_RING=OFF coll $op-off 60 --procs 2 -o $op -b 2M -e 512M -f 4")
done
scripts/device/call.sh e1 "${steps[@]}" 2>&1 | tail -12
