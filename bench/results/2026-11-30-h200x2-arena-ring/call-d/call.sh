#!/bin/bash
scripts/device/unpack-dist.sh >/dev/null
DDP_ROUNDS=2 DDP_RUNS="nccl ring ringoff:PEERLINK_COLL_ARENA_RING=OFF" scripts/device/run-nccl-api.sh ddp 2 > /tmp/ddp32.log 2>&1
cp /tmp/ddp32.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp32.tar.gz -C /tmp call-nccl-api-ddp; rm -rf /tmp/call-nccl-api-ddp $OUT/call-nccl-api-ddp.tar.gz; tail -8 /tmp/ddp32.log
DDP_ROUNDS=2 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 8" DDP_RUNS="nccl ring ringoff:PEERLINK_COLL_ARENA_RING=OFF" scripts/device/run-nccl-api.sh ddp 2 > /tmp/ddp8.log 2>&1
cp /tmp/ddp8.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddp8.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz; tail -8 /tmp/ddp8.log
PLAIN_BINARIES="all_reduce" PLAIN_RUNS="peerlink ringoff:PEERLINK_COLL_ARENA_RING=OFF" scripts/device/run-nccl-api.sh plain 2 > /tmp/plain.log 2>&1
cp /tmp/plain.log /tmp/call-nccl-api-plain/; tar czf $OUT/plain.tar.gz -C /tmp call-nccl-api-plain; rm -f $OUT/call-nccl-api-plain.tar.gz; tail -40 /tmp/plain.log | cut -c1-150
