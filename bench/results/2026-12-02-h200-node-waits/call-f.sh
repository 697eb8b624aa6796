#!/bin/bash
# Where a small call's phases across nodes spend their 36-41 us (calls c, e) against MPI's 1.5-5 us exchange: the
# transport alone, 8 B - 64 KiB, 2 processes as 2 nodes, each beside MPI's own exchange of the same bytes -- on host
# memory, direct (no copies: the transport's own costs) and staged (pinned pieces, copies on a thread), then on GPU
# memory (the communicator's staged path: the copy engine's round trips), under CUDA MPS.
# Pack: build/libpeerlink_mpi.so and build/tests/mpi/mpi_net_bench into dist/mpi (stripped, xz); no CLI, no tests.
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY" /tmp/call-f
nvidia-cuda-mps-control -d && echo "MPS daemon started"
BENCH_SIZES="-b 8 -e 64K -f 8" GPU_BENCH_SIZES="-b 8 -e 64K -f 8" GPU_BENCH_REDUCE="AUTO" \
  timeout 400 scripts/device/run-nodes.sh bench >/tmp/call-f/bench.txt 2>&1
status=$?
echo "bench: exit $status"
echo quit | nvidia-cuda-mps-control
grep -E "^==|^ +[0-9]|^#" /tmp/call-f/bench.txt | head -80
exit $status
