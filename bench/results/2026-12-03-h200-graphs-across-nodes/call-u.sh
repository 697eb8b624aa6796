#!/bin/bash
# One H200: the checks on the session's last build (1a78380c's code: the flat plan across nodes one shot for an
# all-reduce of 2 and a reduce-scatter on every path, waiting ones too). Without MPS: the GPU test, the e2e on 2 x 1
# and 2 x 2, the transport's collectives (mpi_net_e2e), a killed rank, a stall before an async call. Under MPS, 2
# virtual nodes of one rank: the e2e on 2 x 1, then peerlink coll all-reduce and reduce-scatter 8 B - 128 MiB with
# every call waiting on the host (PEERLINK_NET_ASYNC=OFF: the one-shot plan on the waiting path, every result
# checked), and the all-reduce as it runs by default with NCCL split the same way. The outputs:
# $OUT/call-u-checks.tar.gz, $OUT/call-u.tar.gz.
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so,
# mpi_comm_nodes_e2e, mpi_net_e2e), stripped, xz.
scripts/device/unpack-dist.sh
scripts/device/call.sh u-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' \
  'run nodes-comm 150 scripts/device/run-nodes.sh comm' 'run nodes-net 60 scripts/device/run-nodes.sh net' \
  'run nodes-kill 40 scripts/device/run-nodes.sh kill' 'run nodes-stall-async 30 scripts/device/run-nodes.sh stall-async'
status=$?
run() {  # run NAME COLLECTIVE SIZES [VAR=VALUE ...]
  local name=$1 collective=$2 sizes=$3
  shift 3
  echo "OUT=/tmp/call-u/$name COLL_SIZES=$sizes COLL_TIMEOUT=70 COLL_PER_NODE=1 $* run $name 90 scripts/device/run-nodes.sh coll $collective"
}
scripts/device/with-mps.sh scripts/device/call.sh u 'COMM_PER_NODE=1 run nodes-comm-mps 60 scripts/device/run-nodes.sh comm' \
  "$(run ar-wait all_reduce 8:128M:8 PEERLINK_NET_ASYNC=OFF)" "$(run rs-wait reduce_scatter 8:128M:8 PEERLINK_NET_ASYNC=OFF)" \
  "$(run ar all_reduce 8:128M:8 COLL_NCCL=1)" || status=1
exit $status
