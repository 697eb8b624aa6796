#!/bin/bash
# One H200: eager async calls (up to 1 MiB) of all-reduce across 2 nodes and reduce-scatter reducing on the GPU as
# their kernel copies out (c33597e: one shot, the transport only moving data), against the build before (b038a29:
# the host reducing a ring's pieces on the transport's thread; dist/build-b038a29). Without MPS: the GPU test (both
# kernels' reductions of every type and op), the e2e on 2 x 1 and 2 x 2. Under MPS, 2 virtual nodes of one rank: the
# e2e on 2 x 1, then peerlink coll 16 B - 1 MiB of both builds, NCCL split the same way in the new build's runs:
# all-reduce in two rounds, reduce-scatter in one. The outputs: $OUT/call-s-checks.tar.gz, $OUT/call-s.tar.gz.
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so,
# mpi_comm_nodes_e2e), dist/build-b038a29/libpeerlink_mpi.so.xz, and both CLIs in one archive, dist/clis.tar.xz
# (peerlink, build-b038a29/peerlink), unpacked into dist by the device command before this script (the carry limit:
# `tar xJf dist/clis.tar.xz -C dist && bash call-s.sh`).
scripts/device/unpack-dist.sh
scripts/device/call.sh s-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' \
  'run nodes-comm 150 scripts/device/run-nodes.sh comm'
status=$?
run() {  # run NAME COLLECTIVE SIZES [VAR=VALUE ...]
  local name=$1 collective=$2 sizes=$3
  shift 3
  echo "OUT=/tmp/call-s/$name COLL_SIZES=$sizes COLL_TIMEOUT=70 COLL_PER_NODE=1 $* run $name 80 scripts/device/run-nodes.sh coll $collective"
}
before=COLL_BUILD=dist/build-b038a29
sizes=16:1M:4
scripts/device/with-mps.sh scripts/device/call.sh s 'COMM_PER_NODE=1 run nodes-comm-mps 60 scripts/device/run-nodes.sh comm' \
  "$(run ar-1 all_reduce $sizes COLL_NCCL=1)" "$(run ar-before-1 all_reduce $sizes $before)" \
  "$(run ar-2 all_reduce $sizes)" "$(run ar-before-2 all_reduce $sizes $before)" \
  "$(run rs reduce_scatter $sizes COLL_NCCL=1)" "$(run rs-before reduce_scatter $sizes $before)" || status=1
exit $status
