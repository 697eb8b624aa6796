#!/bin/bash
scripts/device/call.sh c1 \
 'test arena 200 gpu_test_communicator_arena_ring' \
 'test procs 150 gpu_test_communicator_processes --gtest_filter=CommunicatorProcesses.EveryCollective*:CommunicatorProcesses.ARankThatDiesMidCollectiveStopsTheOthers:CommunicatorProcesses.AbortStopsEveryRank' \
 'test windows 60 gpu_test_communicator_windows' \
 'PEERLINK_COLL_SHARE_BUFFERS=OFF coll ar-ring 80 --procs 2 -o all_reduce -b 512K -e 512M -f 4' \
 'PEERLINK_COLL_SHARE_BUFFERS=OFF PEERLINK_COLL_ARENA_RING=OFF coll ar-off 80 --procs 2 -o all_reduce -b 512K -e 512M -f 4'
