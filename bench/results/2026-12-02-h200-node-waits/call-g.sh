#!/bin/bash
# One H200 under CUDA MPS: a communicator across nodes no longer waits for its last copies out of pinned memory (the
# caller's stream waits for them). First the correctness runs -- 2 virtual nodes x 2 (every collective and send/recv
# of the API against the closed forms; the in-node phases after a phase across nodes now follow its copies on the
# GPU only) and a rank killed there -- then `peerlink coll` on 2 virtual nodes of one rank against the build before
# (20c36c4, carried as dist/build-20c36c4), three rounds each, 8 B - 16 MiB, and 2 x 2 (4 processes) once each.
# Pack: scripts/device/pack-call.sh (no tests); build/libpeerlink_mpi.so, build/tests/mpi/mpi_comm_nodes_e2e into
# dist/mpi (stripped, xz); 20c36c4's peerlink and libpeerlink_mpi.so into dist/build-20c36c4 (stripped, xz).
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d && echo "MPS daemon started"
common='COLL_SIZES=8:16M:4 COLL_TIMEOUT=150'
collectives='all_reduce reduce_scatter all_gather all_to_all reduce broadcast send_recv'
steps=('run nodes-comm 150 scripts/device/run-nodes.sh comm' 'run nodes-kill 90 scripts/device/run-nodes.sh kill')
for round in 1 2 3; do
  steps+=("OUT=/tmp/call-g/before-$round COLL_BUILD=dist/build-20c36c4 COLL_PER_NODE=1 $common run before-$round 300 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-g/after-$round COLL_PER_NODE=1 $common run after-$round 300 scripts/device/run-nodes.sh coll $collectives")
done
steps+=("OUT=/tmp/call-g/2x2before-1 COLL_BUILD=dist/build-20c36c4 COLL_PER_NODE=2 $common run 2x2before-1 300 scripts/device/run-nodes.sh coll $collectives")
steps+=("OUT=/tmp/call-g/2x2after-1 COLL_PER_NODE=2 $common run 2x2after-1 300 scripts/device/run-nodes.sh coll $collectives")
scripts/device/call.sh g "${steps[@]}"
status=$?
echo quit | nvidia-cuda-mps-control
exit $status
