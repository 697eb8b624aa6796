#!/bin/bash
# One H200: eager queued calls (over 1 MiB) of all-reduce across 2 nodes and reduce-scatter reducing as each piece
# is copied out (884c7fa: one shot, the transport only moving data, a reduction kernel on the copy stream), against
# the build before (d254689: the ring's reductions asked of the GPU mid-piece; dist/build-d254689). Without MPS: the
# GPU test, the e2e on 2 x 1 and 2 x 2 (every collective to 64 MiB, queued from 1 MiB), a rank killed before a 32 MiB
# all-reduce. Under MPS, 2 virtual nodes of one rank: the e2e on 2 x 1, then peerlink coll 2 - 128 MiB of both builds,
# NCCL split the same way in the new build's runs: all-reduce in two rounds, reduce-scatter in one. The outputs:
# $OUT/call-t-checks.tar.gz, $OUT/call-t.tar.gz.
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so,
# mpi_comm_nodes_e2e), dist/build-d254689/libpeerlink_mpi.so.xz, and both CLIs in one archive, dist/clis.tar.xz
# (peerlink, build-d254689/peerlink), unpacked into dist by the device command before this script.
scripts/device/unpack-dist.sh
scripts/device/call.sh t-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' \
  'run nodes-comm 150 scripts/device/run-nodes.sh comm' 'run nodes-kill 40 scripts/device/run-nodes.sh kill'
status=$?
run() {  # run NAME COLLECTIVE SIZES [VAR=VALUE ...]
  local name=$1 collective=$2 sizes=$3
  shift 3
  echo "OUT=/tmp/call-t/$name COLL_SIZES=$sizes COLL_TIMEOUT=70 COLL_PER_NODE=1 $* run $name 90 scripts/device/run-nodes.sh coll $collective"
}
before=COLL_BUILD=dist/build-d254689
sizes=2M:128M:4
scripts/device/with-mps.sh scripts/device/call.sh t 'COMM_PER_NODE=1 run nodes-comm-mps 60 scripts/device/run-nodes.sh comm' \
  "$(run ar-1 all_reduce $sizes COLL_NCCL=1)" "$(run ar-before-1 all_reduce $sizes $before)" \
  "$(run ar-2 all_reduce $sizes)" "$(run ar-before-2 all_reduce $sizes $before)" \
  "$(run rs reduce_scatter $sizes COLL_NCCL=1)" "$(run rs-before reduce_scatter $sizes $before)" || status=1
exit $status
