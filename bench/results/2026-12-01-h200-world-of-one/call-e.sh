#!/bin/bash
# One H200, a world of one process, the real NCCL with ddp_waiting.cu queuing, per DDP all-reduce, a kernel reading and
# writing the bucket in place (as peerlink's kernel of one rank did, whose 2.4 us gaps call d reproduced) with the
# grid and the SMs it takes varied: 32 or 132 blocks, an SM of its own per block (200 KiB of shared memory) on 1, 32
# or 132 blocks, and peerlink's griddepcontrol prologue.
scripts/device/unpack-dist.sh >/dev/null
pre=LD_PRELOAD=dist/ddp_waiting.so
runs="nccl"
for work in touch touch132 excl32 excl132 excl1 griddep; do runs="$runs $work:$pre,INTERPOSE_WORK=$work"; done
DDP_ROUNDS=1 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3 --steps 60" DDP_RUNS="$runs" \
  timeout 330 scripts/device/run-nccl-api.sh ddp 1 > /tmp/ddp.log 2>&1
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
grep -E "mean / NCCL" /tmp/ddp.log | cut -c1-80
grep -h "ddp_waiting" /tmp/call-nccl-api-ddp/ddp-*.txt | head -20
python3 - <<'PY'
import glob, json, statistics
for path in sorted(glob.glob("/tmp/call-nccl-api-ddp/ddp-*.json")):
    profile = json.load(open(path)).get("ddp_profile")
    if not profile: continue
    tl = profile["timeline"]
    means = []
    for step in sorted({e[0] for e in tl}):
        comp = sorted((e for e in tl if e[0] == step and e[1] == "compute"), key=lambda e: e[3])
        gaps = [b[3] - (a[3] + a[4]) for a, b in zip(comp[90:], comp[91:])]
        means.append("%.2f" % statistics.mean(gaps))
    other = [e[4] for e in tl if e[0] == 1 and e[1] != "compute"]
    print(path.split("/")[-1], "backward gap mean (us) by profiled step:", " ".join(means),
          "; other streams' work in step 1: %d pieces, %.1f us" % (len(other), sum(other)))
PY
