#!/bin/bash
# One H200: call m's trial again (eager calls up to 1 MiB async, dist/build-async1m, against call l's build in dist).
# Without MPS the trial's e2e on 2 x 1 and 2 x 2 (dist/mpi holds the trial's e2e and libpeerlink_mpi.so). Under MPS,
# 2 virtual nodes of one rank: peerlink coll 256 KiB - 1 MiB of both builds, two more rounds each, alternating, for
# all-reduce, all-gather, reduce-scatter, send/recv, broadcast and reduce. The outputs: $OUT/call-n-colls.tar.gz.
scripts/device/unpack-dist.sh
scripts/device/call.sh n-checks 'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' \
  'run nodes-comm 150 scripts/device/run-nodes.sh comm'
status=$?
run() {  # run NAME COLLECTIVE [VAR=VALUE ...]
  local name=$1 collective=$2
  shift 2
  echo "OUT=/tmp/call-n/$name COLL_SIZES=256K:1M:2 COLL_TIMEOUT=60 COLL_PER_NODE=1 $* run $name 70 scripts/device/run-nodes.sh coll $collective"
}
trial=COLL_BUILD=dist/build-async1m
steps=()
for round in 2 3; do
  for c in all_reduce all_gather reduce_scatter send_recv broadcast reduce; do
    steps+=("$(run $c-$round $c)" "$(run $c-trial-$round $c $trial)")
  done
done
scripts/device/with-mps.sh scripts/device/call.sh n "${steps[@]}" || status=1
exit $status
