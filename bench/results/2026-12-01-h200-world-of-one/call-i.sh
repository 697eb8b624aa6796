#!/bin/bash
# One H200, a world of one process: peerlink queued a kernel and an event behind it per call; each alone cost nothing
# from the preload. Both together: the plain kernel, and a full-bandwidth copy of the bucket, each with an event.
scripts/device/unpack-dist.sh >/dev/null
pre=LD_PRELOAD=dist/ddp_waiting.so
runs="nccl plainevent:$pre,INTERPOSE_WORK=plainevent vecevent:$pre,INTERPOSE_WORK=vecevent"
DDP_ROUNDS=1 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3 --steps 60" DDP_RUNS="$runs" \
  timeout 150 scripts/device/run-nccl-api.sh ddp 1 > /tmp/ddp.log 2>&1
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
grep -E "mean / NCCL" /tmp/ddp.log | cut -c1-80
grep -h "ddp_waiting" /tmp/call-nccl-api-ddp/ddp-*.txt | head
python3 scripts/device/ddp_profile.py gaps /tmp/call-nccl-api-ddp/ddp-*.json
