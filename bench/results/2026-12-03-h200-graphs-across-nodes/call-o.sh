#!/bin/bash
# One H200: the session's last build (03b16f4: eager async calls up to 1 MiB, the review's fixes: a replayed kernel
# reads failedFrom before it copies in, a partly captured call never starts). Without MPS the checks: the GPU test,
# the e2e on 2 x 1 and 2 x 2, a killed rank, a stall before an async call, the transport's collectives. Under MPS, 2
# virtual nodes of one rank: the e2e on 2 x 1, then peerlink coll all-reduce 8 B - 1 MiB eager and in a graph against
# call m's trial build (dist/build-async1m: the same but the review's fixes), two rounds.
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so, mpi_comm_nodes_e2e,
# mpi_net_e2e) and dist/build-async1m (call m's), stripped, xz.
scripts/device/unpack-dist.sh
scripts/device/call.sh o-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' 'run nodes-comm 150 scripts/device/run-nodes.sh comm' \
  'run nodes-kill 40 scripts/device/run-nodes.sh kill' 'run nodes-stall-async 30 scripts/device/run-nodes.sh stall-async' \
  'run nodes-net 60 scripts/device/run-nodes.sh net'
status=$?
run() {  # run NAME [VAR=VALUE ...]
  local name=$1
  shift
  echo "OUT=/tmp/call-o/$name COLL_SIZES=8:1M:4 COLL_TIMEOUT=60 COLL_PER_NODE=1 $* run $name 70 scripts/device/run-nodes.sh coll all_reduce"
}
trial=COLL_BUILD=dist/build-async1m
scripts/device/with-mps.sh scripts/device/call.sh o 'COMM_PER_NODE=1 run nodes-comm-mps 60 scripts/device/run-nodes.sh comm' \
  "$(run ar-1 COLL_NCCL=1)" "$(run ar-before-1 $trial)" "$(run ar-2)" "$(run ar-before-2 $trial)" || status=1
exit $status
