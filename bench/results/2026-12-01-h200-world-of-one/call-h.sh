#!/bin/bash
# One H200, a world of one process: call g found the old library's cost (+0.8-0.9 us a gap) the same on 132, 32 and 8
# blocks, and a kernel beside copying at full bandwidth nearly free: what else of its launch is it? The preload's
# plain kernel with a 512-byte or 4 KiB argument struct, and its one-node graph re-aimed before each launch (as
# peerlink's); the old library with direct launches and programmatic launch off together.
scripts/device/unpack-dist.sh >/dev/null
pre=LD_PRELOAD=dist/ddp_waiting.so
runs="nccl args512:$pre,INTERPOSE_WORK=args512 args4k:$pre,INTERPOSE_WORK=args4k reaimed:$pre,INTERPOSE_WORK=reaimed"
runs="$runs plainold:LIB=old,PEERLINK_COLL_EAGER_GRAPHS=0,PEERLINK_COLL_PDL=0"
DDP_ROUNDS=1 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3 --steps 60" DDP_RUNS="$runs" \
  timeout 280 scripts/device/run-nccl-api.sh ddp 1 > /tmp/ddp.log 2>&1
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
grep -E "mean / NCCL" /tmp/ddp.log | cut -c1-80
grep -h "ddp_waiting" /tmp/call-nccl-api-ddp/ddp-*.txt | head
python3 scripts/device/ddp_profile.py gaps /tmp/call-nccl-api-ddp/ddp-*.json
