#!/bin/bash
# One H200, one process (world of 1): DDP profiled, peerlink with its eager launch graphs and with direct launches.
scripts/device/unpack-dist.sh >/dev/null
DDP_ROUNDS=1 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3 --steps 60" DDP_RUNS="peerlink direct:PEERLINK_COLL_EAGER_GRAPHS=0" timeout 300 scripts/device/run-nccl-api.sh ddp 1 > /tmp/ddp.log 2>&1
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
grep -E "median step|mean / NCCL" /tmp/ddp.log | cut -c1-300
grep -h "communicator of\|served\|forward" /tmp/call-nccl-api-ddp/ddp-peerlink-1.txt | head -3 | cut -c1-200
for f in /tmp/call-nccl-api-ddp/ddp-*.json; do echo "$f"; python3 -c "
import json,sys; p=json.load(open('$f')).get('ddp_profile') or {}
print(' sync', p.get('sync_ops'))"; done
python3 - <<'PY'
import glob, json, statistics
for path in sorted(glob.glob("/tmp/call-nccl-api-ddp/ddp-*-1.json")):
    tl = json.load(open(path))["ddp_profile"]["timeline"]
    for step in sorted({e[0] for e in tl}):
        comp = sorted((e for e in tl if e[0] == step and e[1] == "compute"), key=lambda e: e[3])
        gaps = [b[3] - (a[3] + a[4]) for a, b in zip(comp[90:], comp[91:])]
        print(path, step, "backward gap mean %.2f us" % statistics.mean(gaps))
PY
