#!/bin/bash
# One H200, two processes sharing it (PEERLINK_COLL_SHARE_GPUS=1): DDP profiled, for the stream waits peerlink's calls
# make (sync_ops); the timing means nothing here (two contexts share the GPU).
scripts/device/unpack-dist.sh >/dev/null
DDP_ROUNDS=1 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 2 --steps 20" DDP_RUNS="share:PEERLINK_COLL_SHARE_GPUS=1" timeout 300 scripts/device/run-nccl-api.sh ddp 2 > /tmp/ddp.log 2>&1
tail -5 /tmp/ddp.log
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
for f in /tmp/call-nccl-api-ddp/ddp-*.json; do echo "$f"; python3 -c "
import json,sys; p=json.load(open('$f')).get('ddp_profile') or {}
print(' sync', p.get('sync_ops')); print(' runtime', p.get('runtime_calls'))"; done
