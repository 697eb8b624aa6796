#!/bin/bash
# One H200 under CUDA MPS: a communicator across nodes no longer waits for its last copies out of pinned memory (the
# caller's stream waits for them). The correctness runs: 2 virtual nodes x 2 (every collective and send/recv of the
# API against the closed forms; the in-node phases after a phase across nodes now follow its copies on the GPU only)
# and a rank killed there. (The timings are call h: the carry limit holds one or the other.)
# Pack: build/libpeerlink_mpi.so and build/tests/mpi/mpi_comm_nodes_e2e into dist/mpi (stripped, xz); nothing else.
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d && echo "MPS daemon started"
steps=('run nodes-comm 150 scripts/device/run-nodes.sh comm' 'run nodes-kill 90 scripts/device/run-nodes.sh kill')
scripts/device/call.sh g "${steps[@]}"
status=$?
echo quit | nvidia-cuda-mps-control
exit $status
