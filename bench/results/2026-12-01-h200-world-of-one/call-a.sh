#!/bin/bash
# One H200, a world of one process: DDP profiled, NCCL and peerlink, two rounds, now that peerlink queues nothing for
# an in-place call of one rank (as NCCL); then the NCCL API's GPU tests (those one GPU can run) and the Python
# package's.
scripts/device/unpack-dist.sh >/dev/null
DDP_ROUNDS=2 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3 --steps 60" \
  DDP_RUNS="nccl peerlink" timeout 300 scripts/device/run-nccl-api.sh ddp 1 > /tmp/ddp.log 2>&1
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
grep -E "median step|mean / NCCL" /tmp/ddp.log | cut -c1-260
python3 - <<'PY'
import glob, json, statistics
for path in sorted(glob.glob("/tmp/call-nccl-api-ddp/ddp-*.json")):
    profile = json.load(open(path)).get("ddp_profile")
    if not profile: continue
    tl = profile["timeline"]
    for step in sorted({e[0] for e in tl}):
        comp = sorted((e for e in tl if e[0] == step and e[1] == "compute"), key=lambda e: e[3])
        gaps = [b[3] - (a[3] + a[4]) for a, b in zip(comp[90:], comp[91:])]
        print(path, step, "backward gap mean %.2f us" % statistics.mean(gaps), "other streams:",
              sorted({e[1] for e in tl if e[0] == step and e[1] != "compute"}))
PY
scripts/device/call.sh tests 'test nccl-api 240 gpu_test_nccl_api'
# PyTorch's collectives and every nccl-tests binary (-c 1, every type and op) in a world of one, peerlink against
# the real NCCL: the copies and the calls left out are checked by clients nobody here wrote.
timeout 150 scripts/device/run-nccl-api.sh torch 1 > /tmp/torch.log 2>&1; tail -4 /tmp/torch.log
timeout 150 scripts/device/run-nccl-api.sh correctness 1 > /tmp/correct.log 2>&1; tail -6 /tmp/correct.log
cp /tmp/torch.log /tmp/correct.log $OUT/
