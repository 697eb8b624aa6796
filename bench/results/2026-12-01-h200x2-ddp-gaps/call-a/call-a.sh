#!/bin/bash
# The DDP gap: kernel_gaps.py (the GPU's own cost per queued kernel) for NCCL, peerlink, direct eager launches and
# forwarded; then DDP batch 32 profiled (launch leads, host time in the collective calls): NCCL, peerlink, direct.
scripts/device/unpack-dist.sh >/dev/null
scripts/device/run-nccl-api.sh gaps 2 > /tmp/gaps.log 2>&1
cp /tmp/gaps.log /tmp/call-nccl-api-gaps/; tar czf $OUT/gaps.tar.gz -C /tmp call-nccl-api-gaps; rm -f $OUT/call-nccl-api-gaps.tar.gz
cat /tmp/call-nccl-api-gaps/gaps.txt
DDP_ROUNDS=2 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3" DDP_RUNS="nccl peerlink direct:PEERLINK_COLL_EAGER_GRAPHS=0" timeout 420 scripts/device/run-nccl-api.sh ddp 2 > /tmp/ddp.log 2>&1
cp /tmp/ddp.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz
grep -E "median step|mean / NCCL" /tmp/ddp.log | cut -c1-400
