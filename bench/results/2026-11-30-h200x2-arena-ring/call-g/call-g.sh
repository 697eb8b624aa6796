#!/bin/bash
scripts/device/unpack-dist.sh >/dev/null
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
L=$PWD/dist/nccl_api/libpeerlink_nccl.so.2
run() { name=$1; shift; env GAPS_NAME=$name "$@" timeout 90 torchrun --nproc-per-node 2 dist/gaps.py 2>&1 | grep -v "^W\|warn" | tail -3; }
run nccl
run peerlink LD_PRELOAD=$L
run peerlink-pdl0 LD_PRELOAD=$L PEERLINK_COLL_PDL=0
run peerlink-ringoff-shareoff LD_PRELOAD=$L PEERLINK_COLL_ARENA_RING=OFF PEERLINK_COLL_SHARE_BUFFERS=OFF
run peerlink-graphs-off LD_PRELOAD=$L PEERLINK_COLL_STAGE_GRAPHS=OFF
run nccl-again
