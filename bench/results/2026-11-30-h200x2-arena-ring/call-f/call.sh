#!/bin/bash
scripts/device/call.sh f1 'test arena 60 gpu_test_communicator_arena_ring --gtest_filter=ArenaRingAuto*:*2ranks_reduce*' 'test procs 90 gpu_test_communicator_processes --gtest_filter=CommunicatorProcesses.EveryCollective*' 2>&1 | tail -4
DDP_ROUNDS=1 DDP_ARGS="--model-width 1024 --model-layers 6 --batch 32 --profile-steps 3" DDP_RUNS="nccl peerlink fwd:PEERLINK_NCCL_FALLBACK=ALL" scripts/device/run-nccl-api.sh ddp 2 > /tmp/ddpg.log 2>&1
cp /tmp/ddpg.log /tmp/call-nccl-api-ddp/; tar czf $OUT/ddpg.tar.gz -C /tmp call-nccl-api-ddp; rm -f $OUT/call-nccl-api-ddp.tar.gz; grep -E "mean / NCCL" /tmp/ddpg.log | cut -c1-200
scripts/device/run-nccl-api.sh plain 2 > /tmp/plain.log 2>&1
cp /tmp/plain.log /tmp/call-nccl-api-plain/; tar czf $OUT/plain.tar.gz -C /tmp call-nccl-api-plain; rm -f $OUT/call-nccl-api-plain.tar.gz; grep -E "time NCCL|problems" /tmp/plain.log | cut -c1-150
