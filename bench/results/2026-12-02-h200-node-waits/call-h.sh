#!/bin/bash
# One H200 under CUDA MPS: a communicator across nodes no longer waits for its last copies out of pinned memory (the
# caller's stream waits for them). `peerlink coll` on 2 virtual nodes of one rank against the build before (20c36c4,
# carried as dist/build-20c36c4), three rounds each, 8 B - 16 MiB, every collective checked. (Not 2 x 2: under MPS the
# ranks of a node sharing the GPU deadlock in their barriers, call g.)
# Pack: scripts/device/pack-call.sh (no tests); build/libpeerlink_mpi.so into dist/mpi (stripped, xz); 20c36c4's
# peerlink and libpeerlink_mpi.so into dist/build-20c36c4 (stripped, xz).
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d && echo "MPS daemon started"
common='COLL_SIZES=8:16M:4 COLL_TIMEOUT=150'
collectives='all_reduce reduce_scatter all_gather all_to_all reduce broadcast send_recv'
steps=()
for round in 1 2 3; do
  steps+=("OUT=/tmp/call-h/before-$round COLL_BUILD=dist/build-20c36c4 COLL_PER_NODE=1 $common run before-$round 300 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-h/after-$round COLL_PER_NODE=1 $common run after-$round 300 scripts/device/run-nodes.sh coll $collectives")
done
scripts/device/call.sh h "${steps[@]}"
status=$?
echo quit | nvidia-cuda-mps-control
exit $status
