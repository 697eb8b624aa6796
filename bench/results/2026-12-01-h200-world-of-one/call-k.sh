#!/bin/bash
# One H200, a world of one process (build-probe-libs.sh first): the old library's cost (+0.8-1.1 us a backward gap,
# calls d, g, h) taken apart in its source: its all-reduce kernel of one rank copying alone (no counters,
# griddepcontrol or trace); no event recorded behind its calls. Beside them NCCL and today's library.
scripts/device/unpack-dist.sh >/dev/null
runs="nccl peerlink copyonly:LIB=copyonly noevent:LIB=noevent"
DDP_ROUNDS=2 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3 --steps 60" DDP_RUNS="$runs" \
  timeout 300 scripts/device/run-nccl-api.sh ddp 1 > /tmp/ddp.log 2>&1
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
grep -E "mean / NCCL" /tmp/ddp.log | cut -c1-80
python3 scripts/device/ddp_profile.py gaps /tmp/call-nccl-api-ddp/ddp-*.json
