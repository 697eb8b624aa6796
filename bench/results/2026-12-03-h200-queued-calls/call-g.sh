#!/bin/bash
# One H200: call f's checks after a review's fixes (a one-source computation copies the stored bits; a queued call
# whose side the caller could not queue fails its computations' waits at once; send/recv groups checked piece by
# piece before they are queued). No MPS; call f's timings stand (these touch no path it timed but the copy kernel's).
# Pack: as call-f.sh.
scripts/device/unpack-dist.sh
scripts/device/call.sh g-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 60 scripts/device/run-nodes.sh comm' 'run nodes-comm 60 scripts/device/run-nodes.sh comm' \
  'run nodes-kill 40 scripts/device/run-nodes.sh kill' 'run nodes-stall 30 scripts/device/run-nodes.sh stall' \
  'run nodes-net 60 scripts/device/run-nodes.sh net'
