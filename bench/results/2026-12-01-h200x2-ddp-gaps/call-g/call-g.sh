#!/bin/bash
# One H200, one process (world of 1): DDP profiled and kernel_gaps.py, NCCL and peerlink: does a world of one show
# the gaps' difference?
scripts/device/unpack-dist.sh >/dev/null
GAPS_RUNS="nccl peerlink" scripts/device/run-nccl-api.sh gaps 1 > /tmp/gaps.log 2>&1
cp /tmp/gaps.log /tmp/call-nccl-api-gaps/; tar czf $OUT/gaps.tar.gz -C /tmp call-nccl-api-gaps; rm -f $OUT/call-nccl-api-gaps.tar.gz
cat /tmp/call-nccl-api-gaps/gaps.txt
DDP_ROUNDS=1 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3 --steps 60" DDP_RUNS="nccl peerlink" timeout 300 scripts/device/run-nccl-api.sh ddp 1 > /tmp/ddp.log 2>&1
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
grep -E "median step|mean / NCCL" /tmp/ddp.log | cut -c1-300
grep -h "communicator of\|served\|forward" /tmp/call-nccl-api-ddp/ddp-peerlink-1.txt | head -3 | cut -c1-200
for f in /tmp/call-nccl-api-ddp/ddp-*.json; do echo "$f"; python3 -c "
import json,sys; p=json.load(open('$f')).get('ddp_profile') or {}
print(' sync', p.get('sync_ops'))"; done
