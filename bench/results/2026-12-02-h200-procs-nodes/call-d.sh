#!/bin/bash
# One H200: the staged suite's 8-rank cases after the host ring's grid was capped at the communicator's (call c's two
# timeouts: the chains of broadcast and reduce, 8 ranks on the one GPU at 64 blocks each).
# Pack: scripts/device/pack-call.sh gpu_test_communicator_staged
scripts/device/call.sh d \
  'PEERLINK_TIMEOUT_MS=30000 test staged-8 150 gpu_test_communicator_staged --gtest_filter=*8ranks_all*'
