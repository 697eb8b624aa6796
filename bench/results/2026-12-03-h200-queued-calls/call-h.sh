#!/bin/bash
# One H200: the checks once more after a second review (a piece's computations and one step's more must fit the
# ticket ring, else the call waits; the compute stream joined to the copy stream also where queuing fails part-way)
# and the async calls run through the queued calls' runner. No MPS; call g's timings stand.
# Pack: as call-f.sh.
scripts/device/unpack-dist.sh
scripts/device/call.sh h-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 60 scripts/device/run-nodes.sh comm' 'run nodes-comm 60 scripts/device/run-nodes.sh comm' \
  'run nodes-kill 40 scripts/device/run-nodes.sh kill' 'run nodes-stall-async 30 scripts/device/run-nodes.sh stall-async' \
  'run nodes-net 60 scripts/device/run-nodes.sh net'
# Then, the machine still held, by hand in the same lease: the 2 x 1 e2e twice more (its timing's spread without MPS),
# and under MPS small all-reduces and send/recv, async and waiting, one round each (the async calls' new runner):
#   scripts/device/call.sh h-repeat 'COMM_PER_NODE=1 run nodes-comm-1 40 scripts/device/run-nodes.sh comm' \
#     'COMM_PER_NODE=1 run nodes-comm-1-again 40 scripts/device/run-nodes.sh comm'
#   scripts/device/with-mps.sh scripts/device/call.sh h-small \
#     'OUT=/tmp/call-h-small/async-1 COLL_SIZES=8:8K:4 COLL_TIMEOUT=30 COLL_PER_NODE=1 run async-1 40 scripts/device/run-nodes.sh coll all_reduce send_recv' \
#     'OUT=/tmp/call-h-small/sync-1 PEERLINK_NET_ASYNC=OFF COLL_SIZES=8:8K:4 COLL_TIMEOUT=30 COLL_PER_NODE=1 run sync-1 40 scripts/device/run-nodes.sh coll all_reduce send_recv'
