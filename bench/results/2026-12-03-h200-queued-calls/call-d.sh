#!/bin/bash
# One H200: the checks of call c again after the fix of a failed queued call (its pieces marked ready with its last
# ticket: the all-ones word call c wrote is behind every ticket in CUDA's cyclic comparison, and call c's kill test
# hung). The killed rank first, the stalled streams, the communicator across 2 virtual nodes x 2 and x 1, the transport
# alone. No MPS; the coll timings of call c stand (this change touches only a failed call).
# Pack: as call-c.sh.
scripts/device/unpack-dist.sh
scripts/device/call.sh d-checks 'run nodes-kill 60 scripts/device/run-nodes.sh kill' \
  'run nodes-stall 40 scripts/device/run-nodes.sh stall' 'run nodes-stall-sync 40 scripts/device/run-nodes.sh stall-sync' \
  'run nodes-stall-async 40 scripts/device/run-nodes.sh stall-async' \
  'run nodes-comm 100 scripts/device/run-nodes.sh comm' 'COMM_PER_NODE=1 run nodes-comm-1 60 scripts/device/run-nodes.sh comm' \
  'run nodes-net 60 scripts/device/run-nodes.sh net'
