#!/bin/bash
# One H200 under MPS, 2 virtual nodes of one rank: eager calls of 256 KiB - 1 MiB as async calls (one kernel on the
# caller's stream, the host reducing) instead of queued (copies and GPU reductions on the transport's copy stream):
# kAsyncCallBytes 1 MiB (dist/build-async1m, a trial on b2b115c) against 256 KiB (call l's build, dist). peerlink coll
# 128 KiB - 2 MiB, eager and in a graph, all-reduce in two rounds, all-gather, reduce-scatter, send/recv, broadcast,
# reduce in one; NCCL split the same way in the first round's runs. The outputs: $OUT/call-m-colls.tar.gz.
scripts/device/unpack-dist.sh
run() {  # run NAME COLLECTIVE [VAR=VALUE ...]
  local name=$1 collective=$2
  shift 2
  echo "OUT=/tmp/call-m/$name COLL_SIZES=128K:2M:2 COLL_TIMEOUT=60 COLL_PER_NODE=1 $* run $name 70 scripts/device/run-nodes.sh coll $collective"
}
trial=COLL_BUILD=dist/build-async1m
steps=("$(run ar-1 all_reduce COLL_NCCL=1)" "$(run ar-trial-1 all_reduce $trial)" "$(run ar-2 all_reduce)"
       "$(run ar-trial-2 all_reduce $trial)")
for c in all_gather reduce_scatter send_recv broadcast reduce; do
  steps+=("$(run $c $c COLL_NCCL=1)" "$(run $c-trial $c $trial)")
done
scripts/device/with-mps.sh scripts/device/call.sh m "${steps[@]}"
