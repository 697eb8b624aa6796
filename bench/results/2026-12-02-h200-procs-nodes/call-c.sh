#!/bin/bash
# One H200: a rank's messages to itself now paired by one function (selfMessages) for the window plan and the staged
# plans' ops -- the staged communicator's suite (send/recv groups with messages to itself, 2-8 ranks on the one GPU)
# and the communicator across processes sharing the GPU.
# Pack: scripts/device/pack-call.sh gpu_test_communicator_staged gpu_test_communicator_processes
scripts/device/call.sh c \
  'PEERLINK_TIMEOUT_MS=30000 test staged 300 gpu_test_communicator_staged' \
  'PEERLINK_COLL_SHARE_GPUS=1 test processes 200 gpu_test_communicator_processes'
