#!/bin/bash
# One H200: the async slots of 1 MiB, a captured piece at most (52bfc20), against 256 KiB (5a0102f, call i's build,
# the pieces' kernels already split; dist/build-5a0102f). Without MPS the checks: the GPU test (the async kernel's
# copies up to a whole slot), the e2e on 2 x 1 and 2 x 2. Under MPS, 2 virtual nodes of one rank: the e2e on 2 x 1,
# then peerlink coll 512 KiB - 32 MiB eager and in a graph of both builds, NCCL split the same way in the new build's
# runs: all-reduce in two rounds, all-gather, reduce-scatter, send/recv. The outputs: $OUT/call-k/NAME/*.tar.gz.
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so, mpi_comm_nodes_e2e)
# and dist/build-5a0102f (call i's peerlink.xz and libpeerlink_mpi.so.xz), stripped, xz.
scripts/device/unpack-dist.sh
scripts/device/call.sh k-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' 'run nodes-comm 150 scripts/device/run-nodes.sh comm'
status=$?
run() {  # run NAME COLLECTIVE [VAR=VALUE ...]
  local name=$1 collective=$2
  shift 2
  echo "OUT=/tmp/call-k/$name COLL_SIZES=512K:32M:4 COLL_TIMEOUT=70 COLL_PER_NODE=1 $* run $name 80 scripts/device/run-nodes.sh coll $collective"
}
before=COLL_BUILD=dist/build-5a0102f
scripts/device/with-mps.sh scripts/device/call.sh k 'COMM_PER_NODE=1 run nodes-comm-mps 60 scripts/device/run-nodes.sh comm' \
  "$(run ar-1 all_reduce COLL_NCCL=1)" "$(run ar-before-1 all_reduce $before)" \
  "$(run ar-2 all_reduce)" "$(run ar-before-2 all_reduce $before)" \
  "$(run ag all_gather COLL_NCCL=1)" "$(run ag-before all_gather $before)" \
  "$(run rs reduce_scatter COLL_NCCL=1)" "$(run rs-before reduce_scatter $before)" \
  "$(run sr send_recv COLL_NCCL=1)" "$(run sr-before send_recv $before)" || status=1
exit $status
