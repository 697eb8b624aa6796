#!/bin/bash
# One H200 under CUDA MPS: the session end to end -- the build it started from (33e44d1, carried as
# dist/build-33e44d1) against its last (75c7b1a: the waits that yield, one rank per node without copies, the copies
# out in stream order), `peerlink coll` on 2 virtual nodes of one rank, all seven collectives, 8 B - 16 MiB, three
# rounds each, interleaved, every cell checked.
# Pack: scripts/device/pack-call.sh (no tests); build/libpeerlink_mpi.so into dist/mpi (stripped, xz); 33e44d1's
# peerlink and libpeerlink_mpi.so into dist/build-33e44d1 (stripped, xz).
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d && echo "MPS daemon started"
common='COLL_SIZES=8:16M:4 COLL_TIMEOUT=150 COLL_PER_NODE=1'
collectives='all_reduce reduce_scatter all_gather all_to_all reduce broadcast send_recv'
steps=()
for round in 1 2 3; do
  steps+=("OUT=/tmp/call-j/before-$round COLL_BUILD=dist/build-33e44d1 $common run before-$round 300 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-j/after-$round $common run after-$round 300 scripts/device/run-nodes.sh coll $collectives")
done
scripts/device/call.sh j "${steps[@]}"
status=$?
echo quit | nvidia-cuda-mps-control
exit $status
