#!/bin/bash
# Two H200s, for when two GPUs are lent: DDP (batch 32, profiled) with the bucket kernel's grid varied (in a world of
# one the grid did not matter: ../2026-12-01-h200-world-of-one/, call g). NCCL as it is and with 32 channels
# (LD_PRELOAD= empty: the real NCCL); peerlink as it is, its grid at 8, 16 and 64 blocks; each run's backward gaps and
# its collective kernels' GPU time.
scripts/device/unpack-dist.sh >/dev/null
runs="nccl ncclwide:LD_PRELOAD=,NCCL_MIN_NCHANNELS=32,NCCL_MAX_NCHANNELS=32 peerlink"
runs="$runs blocks8:PEERLINK_COLL_MAX_BLOCKS=8 blocks16:PEERLINK_COLL_MAX_BLOCKS=16 blocks64:PEERLINK_COLL_MAX_BLOCKS=64"
DDP_ROUNDS=1 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3 --steps 60" DDP_RUNS="$runs" \
  timeout 500 scripts/device/run-nccl-api.sh ddp 2 > /tmp/ddp.log 2>&1
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
grep -E "mean / NCCL" /tmp/ddp.log | cut -c1-80
python3 scripts/device/ddp_profile.py gaps /tmp/call-nccl-api-ddp/ddp-*.json
