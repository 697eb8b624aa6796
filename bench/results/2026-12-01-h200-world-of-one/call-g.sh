#!/bin/bash
# One H200, a world of one process: does a kernel beside DDP's backward pass cost its launches by the memory bandwidth
# it takes? The real NCCL with ddp_waiting.cu copying each bucket onto itself at full bandwidth on 132 or 32 blocks;
# the old library (c340046a, dist/old), whose kernel of one rank did the same, on its default grid and on 32 and 8
# blocks.
scripts/device/unpack-dist.sh >/dev/null
pre=LD_PRELOAD=dist/ddp_waiting.so
runs="nccl vec132:$pre,INTERPOSE_WORK=vec132 vec32:$pre,INTERPOSE_WORK=vec32 old:LIB=old"
runs="$runs old32:LIB=old,PEERLINK_COLL_MAX_BLOCKS=32 old8:LIB=old,PEERLINK_COLL_MAX_BLOCKS=8"
DDP_ROUNDS=1 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3 --steps 60" DDP_RUNS="$runs" \
  timeout 300 scripts/device/run-nccl-api.sh ddp 1 > /tmp/ddp.log 2>&1
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
grep -E "mean / NCCL" /tmp/ddp.log | cut -c1-80
grep -h "ddp_waiting" /tmp/call-nccl-api-ddp/ddp-*.txt | head
python3 scripts/device/ddp_profile.py gaps /tmp/call-nccl-api-ddp/ddp-*.json
