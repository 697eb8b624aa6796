#!/bin/bash
# The DDP gap: kernel_gaps.py (400 kernels, phases with an all-reduce waiting behind them) for NCCL and peerlink;
# DDP batch 32 profiled with the stream waits (sync_ops) for NCCL, peerlink (DDP_RUNS).
scripts/device/unpack-dist.sh >/dev/null
GAPS_RUNS="nccl peerlink" scripts/device/run-nccl-api.sh gaps 2 > /tmp/gaps.log 2>&1
cp /tmp/gaps.log /tmp/call-nccl-api-gaps/; tar czf $OUT/gaps.tar.gz -C /tmp call-nccl-api-gaps; rm -f $OUT/call-nccl-api-gaps.tar.gz
cat /tmp/call-nccl-api-gaps/gaps.txt
DDP_ROUNDS=1 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3" DDP_RUNS="${DDP_RUNS:-nccl peerlink}" timeout 300 scripts/device/run-nccl-api.sh ddp 2 > /tmp/ddp.log 2>&1
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
grep -E "median step|mean / NCCL" /tmp/ddp.log | cut -c1-300
for f in /tmp/call-nccl-api-ddp/ddp-*.json; do echo "$f"; python3 -c "
import json,sys; p=json.load(open('$f')).get('ddp_profile') or {}
print(' sync', p.get('sync_ops')); print(' runtime', p.get('runtime_calls'))"; done
