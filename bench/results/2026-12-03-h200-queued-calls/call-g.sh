#!/bin/bash
# One H200: a queued call's pieces two at a time on the host (as the staged path's), its computations on a stream of
# their own (submitted in the copy stream's order), tickets asked out of order published over their asked prefix;
# and a review's fixes after call f (a one-source computation copies the stored bits; a call whose side the caller
# could not queue fails its computations' waits at once; send/recv groups checked piece by piece before queued).
# Call f's checks without MPS, then its timings under MPS (sync against queued, two rounds each; NCCL once).
# Pack: as call-f.sh.
scripts/device/unpack-dist.sh
scripts/device/call.sh g-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 60 scripts/device/run-nodes.sh comm' 'run nodes-comm 60 scripts/device/run-nodes.sh comm' \
  'run nodes-kill 40 scripts/device/run-nodes.sh kill' 'run nodes-stall 30 scripts/device/run-nodes.sh stall' \
  'run nodes-stall-async 30 scripts/device/run-nodes.sh stall-async' 'run nodes-net 60 scripts/device/run-nodes.sh net'
status=$?
common='COLL_SIZES=8:32M:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
collectives='all_reduce reduce_scatter all_gather all_to_all reduce broadcast send_recv'
steps=()
for round in 1 2; do
  steps+=("OUT=/tmp/call-g/sync-$round PEERLINK_NET_ASYNC=OFF $common run sync-$round 60 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-g/async-$round $common run async-$round 60 scripts/device/run-nodes.sh coll $collectives")
done
steps+=("OUT=/tmp/call-g/nccl-1 COLL_NCCL=1 $common run nccl-1 90 scripts/device/run-nodes.sh coll $collectives")
scripts/device/with-mps.sh scripts/device/call.sh g "${steps[@]}" || status=1
exit $status
