#!/bin/bash
# One H200: a captured call's pieces as one job on the progress thread, two at a time (24a2c65, with the 1 MiB slots
# and the split kernels), against call k's build (52bfc20, a job a piece; dist/build-52bfc20). Without MPS the e2e on
# 2 x 1 and 2 x 2. Under MPS, 2 virtual nodes of one rank: the e2e on 2 x 1, then peerlink coll eager and in a graph
# of both builds, NCCL split the same way in the new build's runs: all-reduce 512 KiB - 32 MiB in two rounds and 8 B -
# 128 KiB (one piece: the eager async calls' job changed too), all-gather, reduce-scatter and send/recv 512 KiB - 32
# MiB. The outputs: $OUT/call-l-colls.tar.gz (every run's nodes-coll*.tar.gz).
# Pack: scripts/device/pack-call.sh, then dist/mpi (libpeerlink_mpi.so, mpi_comm_nodes_e2e) and dist/build-52bfc20
# (call k's peerlink.xz and libpeerlink_mpi.so.xz), stripped, xz.
scripts/device/unpack-dist.sh
scripts/device/call.sh l-checks 'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' \
  'run nodes-comm 150 scripts/device/run-nodes.sh comm'
status=$?
run() {  # run NAME COLLECTIVE SIZES [VAR=VALUE ...]
  local name=$1 collective=$2 sizes=$3
  shift 3
  echo "OUT=/tmp/call-l/$name COLL_SIZES=$sizes COLL_TIMEOUT=70 COLL_PER_NODE=1 $* run $name 80 scripts/device/run-nodes.sh coll $collective"
}
before=COLL_BUILD=dist/build-52bfc20
large=512K:32M:4
scripts/device/with-mps.sh scripts/device/call.sh l 'COMM_PER_NODE=1 run nodes-comm-mps 60 scripts/device/run-nodes.sh comm' \
  "$(run ar-1 all_reduce $large COLL_NCCL=1)" "$(run ar-before-1 all_reduce $large $before)" \
  "$(run ar-2 all_reduce $large)" "$(run ar-before-2 all_reduce $large $before)" \
  "$(run ar-small all_reduce 8:128K:4 COLL_NCCL=1)" "$(run ar-small-before all_reduce 8:128K:4 $before)" \
  "$(run ag all_gather $large COLL_NCCL=1)" "$(run ag-before all_gather $large $before)" \
  "$(run rs reduce_scatter $large COLL_NCCL=1)" "$(run rs-before reduce_scatter $large $before)" \
  "$(run sr send_recv $large COLL_NCCL=1)" "$(run sr-before send_recv $large $before)" || status=1
exit $status
