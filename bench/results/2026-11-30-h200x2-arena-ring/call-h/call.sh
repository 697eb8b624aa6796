#!/bin/bash
scripts/device/unpack-dist.sh >/dev/null
DDP_ROUNDS=2 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3" DDP_RUNS="nccl peerlink pdl0:PEERLINK_COLL_PDL=0" scripts/device/run-nccl-api.sh ddp 2 > /tmp/ddph.log 2>&1
cp /tmp/ddph.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddph.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz; grep -E "mean / NCCL" /tmp/ddph.log | cut -c1-200
