#!/bin/bash
# One H200, a world of one process: DDP on the NCCL library of c340046a (before peerlink queued nothing for a call
# in place there; packed as dist/old), whose kernel waiting in the process-group stream cost the backward pass's
# launches (2.4 us gaps against 1.4) where the preload's kernels of every kind in call c cost nothing: the old
# library's kernel taken apart by its settings (grid, algorithm, protocol, programmatic launch, direct launches).
scripts/device/unpack-dist.sh >/dev/null
runs="nccl old:LIB=old blocks1:LIB=old,PEERLINK_COLL_MAX_BLOCKS=1 oneshot:LIB=old,PEERLINK_ALGO=ONESHOT"
runs="$runs ring:LIB=old,PEERLINK_ALGO=RING nopdl:LIB=old,PEERLINK_COLL_PDL=0 direct:LIB=old,PEERLINK_COLL_EAGER_GRAPHS=0"
runs="$runs simple:LIB=old,PEERLINK_PROTO=SIMPLE"
DDP_ROUNDS=1 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3 --steps 60" DDP_RUNS="$runs" \
  timeout 400 scripts/device/run-nccl-api.sh ddp 1 > /tmp/ddp.log 2>&1
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
grep -E "mean / NCCL" /tmp/ddp.log | cut -c1-80
grep -h "all_reduce of" /tmp/call-nccl-api-ddp/ddp-*.txt | cut -c1-220 | sort | uniq -c | head -20
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
    comm = sorted({e[5][:60] for e in tl if e[1] != "compute"})
    print(path.split("/")[-1], "backward gap mean (us) by profiled step:", " ".join(means), comm[:3])
PY
