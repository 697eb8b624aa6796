#!/bin/bash
# The arena ring under compute-sanitizer memcheck; its tests with the grid capped at 16 blocks and with direct
# eager launches; the processes' tests with direct eager launches.
scripts/device/call.sh b \
  'TOOLS=memcheck PEERLINK_TIMEOUT_MS=60000 run sanitizer 200 scripts/device/run-sanitizer.sh gpu_test_communicator_arena_ring *2ranks*' \
  'PEERLINK_COLL_MAX_BLOCKS=16 test ring-cap16 120 gpu_test_communicator_arena_ring' \
  'PEERLINK_COLL_EAGER_GRAPHS=0 test ring-direct 120 gpu_test_communicator_arena_ring' \
  'PEERLINK_COLL_EAGER_GRAPHS=0 test processes-direct 150 gpu_test_communicator_processes'
