#!/bin/bash
# One H200 under MPS, 2 virtual nodes of one rank (call i's dist carried again; call i's own coll outputs were not
# copied out): peerlink coll 512 KiB - 32 MiB, eager and in a graph, of the change (75db11c) with NCCL split the same
# way in the same processes, and of the commit before it (ed79657, dist/build-ed79657): all-reduce in two rounds,
# all-gather and reduce-scatter in one. The outputs: $OUT/call-j/NAME/nodes-coll*.tar.gz.
scripts/device/unpack-dist.sh
run() {  # run NAME COLLECTIVE [VAR=VALUE ...]
  local name=$1 collective=$2
  shift 2
  echo "OUT=/tmp/call-j/$name COLL_SIZES=512K:32M:4 COLL_TIMEOUT=70 COLL_PER_NODE=1 $* run $name 80 scripts/device/run-nodes.sh coll $collective"
}
scripts/device/with-mps.sh scripts/device/call.sh j \
  "$(run ar-1 all_reduce COLL_NCCL=1)" "$(run ar-before-1 all_reduce COLL_BUILD=dist/build-ed79657)" \
  "$(run ar-2 all_reduce)" "$(run ar-before-2 all_reduce COLL_BUILD=dist/build-ed79657)" \
  "$(run ag all_gather COLL_NCCL=1)" "$(run ag-before all_gather COLL_BUILD=dist/build-ed79657)" \
  "$(run rs reduce_scatter COLL_NCCL=1)" "$(run rs-before reduce_scatter COLL_BUILD=dist/build-ed79657)"
