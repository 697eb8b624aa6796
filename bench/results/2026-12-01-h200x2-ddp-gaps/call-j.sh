#!/bin/bash
# Two H200s, for when two GPUs are lent: DDP (batch 32, profiled) with the bucket kernel's hold on the SMs varied, the
# lead of the world-of-one probes (../2026-12-01-h200-world-of-one/: waiting costs nothing, running on SMs a kernel
# holds costs). NCCL as it is and with 32 channels (LD_PRELOAD= empty: the real NCCL); peerlink as it is, its grid at
# 8, 16 and 64 blocks; each run's backward gaps and its collective kernels' GPU time.
scripts/device/unpack-dist.sh >/dev/null
runs="nccl ncclwide:LD_PRELOAD=,NCCL_MIN_NCHANNELS=32,NCCL_MAX_NCHANNELS=32 peerlink"
runs="$runs blocks8:PEERLINK_COLL_MAX_BLOCKS=8 blocks16:PEERLINK_COLL_MAX_BLOCKS=16 blocks64:PEERLINK_COLL_MAX_BLOCKS=64"
DDP_ROUNDS=1 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3 --steps 60" DDP_RUNS="$runs" \
  timeout 500 scripts/device/run-nccl-api.sh ddp 2 > /tmp/ddp.log 2>&1
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
grep -E "mean / NCCL" /tmp/ddp.log | cut -c1-80
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
    print(path.split("/")[-1], "backward gaps (us):", " ".join(means), "; collective kernels, step 1: %d, %.0f us" %
          (len(other), sum(other)))
PY
