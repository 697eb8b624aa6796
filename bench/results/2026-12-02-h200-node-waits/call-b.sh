#!/bin/bash
# Call a again under CUDA MPS (the two processes' kernels then share the GPU without switching contexts, so a small
# call's host costs are not hidden behind the switches): the MPS control daemon started for this call, stopped after.
# Pack: as call a.
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
command -v nvidia-cuda-mps-control || { echo "no nvidia-cuda-mps-control here"; exit 1; }
nvidia-cuda-mps-control -d && echo "MPS daemon started"
common='COLL_SIZES=8:1M:4 COLL_PER_NODE=1 COLL_TIMEOUT=100'
steps=()
for round in 1 2; do
  steps+=("OUT=/tmp/call-b/before-$round COLL_BUILD=dist/build-33e44d1 $common run before-$round 330 scripts/device/run-nodes.sh coll all_reduce reduce_scatter all_gather")
  steps+=("OUT=/tmp/call-b/after-$round $common run after-$round 330 scripts/device/run-nodes.sh coll all_reduce reduce_scatter all_gather")
done
scripts/device/call.sh b "${steps[@]}"
status=$?
echo quit | nvidia-cuda-mps-control
cp -r "$CUDA_MPS_LOG_DIRECTORY" /tmp/call-b/mps-log 2>/dev/null
exit $status
