#!/usr/bin/env bash
# Runs a command with CUDA MPS on (the GPU machines have nvidia-cuda-mps-control): the control daemon started with its
# pipe and log folders under a fresh temporary folder, exported for the command, and told to quit afterwards
# whatever the command did; exits with the command's status. Under MPS the processes sharing a GPU run their kernels
# at once instead of taking turns in time slices, so a small call's host costs show (bench/results/
# 2026-12-02-h200-node-waits/). Not for ranks that wait on each other inside kernels on one GPU (two ranks of a node
# sharing it): their grids need not all be resident at once there, and they deadlock in their barriers.
# usage: scripts/device/with-mps.sh COMMAND [ARGS...]
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: scripts/device/with-mps.sh COMMAND [ARGS...]" >&2; exit 2; }
command -v nvidia-cuda-mps-control >/dev/null || { echo "with-mps.sh: no nvidia-cuda-mps-control here" >&2; exit 2; }
base=$(mktemp -d)
export CUDA_MPS_PIPE_DIRECTORY=$base/pipe CUDA_MPS_LOG_DIRECTORY=$base/log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d || { echo "with-mps.sh: the MPS control daemon did not start" >&2; exit 2; }
echo "with-mps.sh: MPS on ($CUDA_MPS_PIPE_DIRECTORY)" >&2
"$@"
status=$?
echo quit | nvidia-cuda-mps-control
exit $status
