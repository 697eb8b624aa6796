#!/bin/bash
# One H200 under CUDA MPS, 2 virtual nodes of one rank each: one rank per node now runs every collective as one call
# across nodes from the caller's buffers (no copies in the node), against the build before that change (da42223, the
# "after" of calls a-c; carried as dist/build-da42223), three rounds each, interleaved, 8 B - 16 MiB, the five
# collectives whose shape changed.
# Pack: scripts/device/pack-call.sh (no tests); build/libpeerlink_mpi.so into dist/mpi (stripped, xz); da42223's
# peerlink and libpeerlink_mpi.so into dist/build-da42223 (stripped, xz).
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d && echo "MPS daemon started"
common='COLL_SIZES=8:16M:4 COLL_PER_NODE=1 COLL_TIMEOUT=150'
collectives='all_reduce reduce_scatter all_gather all_to_all reduce'
steps=()
for round in 1 2 3; do
  steps+=("OUT=/tmp/call-e/before-$round COLL_BUILD=dist/build-da42223 $common run before-$round 300 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-e/after-$round $common run after-$round 300 scripts/device/run-nodes.sh coll $collectives")
done
scripts/device/call.sh e "${steps[@]}"
status=$?
echo quit | nvidia-cuda-mps-control
exit $status
