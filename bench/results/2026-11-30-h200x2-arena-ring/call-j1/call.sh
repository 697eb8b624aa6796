#!/bin/bash
scripts/device/call.sh j1 \
 'test staged 150 gpu_test_communicator_staged' \
 'test arena 40 gpu_test_communicator_arena_ring --gtest_filter=*2ranks*' \
 'PEERLINK_COLL_HOST_STAGED=all coll hs 30 -g 2 -o all_reduce -b 1M -e 16M -f 2' 2>&1 | tail -6
