#!/bin/bash
# Next: a world of one on one H200, DDP profiled, taking apart what of a served call costs the compute stream's
# launches (ddp_interpose.c, built into dist/ddp_interpose.so before the call): NCCL, peerlink, peerlink with its
# all-reduces answered without it (what NCCL does in a world of one), with PyTorch's async-error polls answered
# without it, and both. Then the backward gaps of each run.
scripts/device/unpack-dist.sh >/dev/null
lib=dist/nccl_api/libpeerlink_nccl.so.2
pre=dist/ddp_interpose.so
DDP_ROUNDS=1 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3 --steps 60" \
  DDP_RUNS="nccl peerlink skipar:LD_PRELOAD=$pre:$lib,INTERPOSE_SKIP_ALLREDUCE=1 skiperr:LD_PRELOAD=$pre:$lib,INTERPOSE_SKIP_ASYNC_ERROR=1 both:LD_PRELOAD=$pre:$lib,INTERPOSE_SKIP_ALLREDUCE=1,INTERPOSE_SKIP_ASYNC_ERROR=1" \
  timeout 420 scripts/device/run-nccl-api.sh ddp 1 > /tmp/ddp.log 2>&1
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
grep -E "median step|mean / NCCL" /tmp/ddp.log | cut -c1-200
grep -h "ddp_interpose" /tmp/call-nccl-api-ddp/ddp-*.txt | head
python3 - <<'PY'
import glob, json, statistics
for path in sorted(glob.glob("/tmp/call-nccl-api-ddp/ddp-*-1.json")):
    tl = json.load(open(path))["ddp_profile"]["timeline"]
    for step in sorted({e[0] for e in tl}):
        comp = sorted((e for e in tl if e[0] == step and e[1] == "compute"), key=lambda e: e[3])
        gaps = [b[3] - (a[3] + a[4]) for a, b in zip(comp[90:], comp[91:])]
        print(path, step, "backward gap mean %.2f us" % statistics.mean(gaps))
PY
