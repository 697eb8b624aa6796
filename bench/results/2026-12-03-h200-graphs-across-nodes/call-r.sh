#!/bin/bash
# One H200: captured all-reduces of 2 ranks and reduce-scatters reducing on the GPU as their pieces copy out
# (2ad7efa: one shot, the transport only moving data, the replayed kernel reducing), against the build before
# (d628c34, the host reducing on the transport's thread; dist/build-d628c34). Without MPS: the GPU test (the
# reducing kernel of every type and op), the e2e on 2 x 1 and 2 x 2 (its graph now with bf16, in-place, i32 and
# multi-piece reductions). Under MPS, 2 virtual nodes of one rank: the e2e on 2 x 1, then peerlink coll eager and in
# a graph of both builds, NCCL split the same way in the new build's runs: all-reduce 512 KiB - 32 MiB in two rounds
# and 8 B - 128 KiB, reduce-scatter 512 KiB - 32 MiB. The outputs: $OUT/call-r-checks.tar.gz, $OUT/call-r.tar.gz.
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so,
# mpi_comm_nodes_e2e) and dist/build-d628c34 (peerlink.xz, libpeerlink_mpi.so.xz), stripped, xz.
scripts/device/unpack-dist.sh
scripts/device/call.sh r-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' \
  'run nodes-comm 150 scripts/device/run-nodes.sh comm'
status=$?
run() {  # run NAME COLLECTIVE SIZES [VAR=VALUE ...]
  local name=$1 collective=$2 sizes=$3
  shift 3
  echo "OUT=/tmp/call-r/$name COLL_SIZES=$sizes COLL_TIMEOUT=70 COLL_PER_NODE=1 $* run $name 80 scripts/device/run-nodes.sh coll $collective"
}
before=COLL_BUILD=dist/build-d628c34
large=512K:32M:4
scripts/device/with-mps.sh scripts/device/call.sh r 'COMM_PER_NODE=1 run nodes-comm-mps 60 scripts/device/run-nodes.sh comm' \
  "$(run ar-1 all_reduce $large COLL_NCCL=1)" "$(run ar-before-1 all_reduce $large $before)" \
  "$(run ar-2 all_reduce $large)" "$(run ar-before-2 all_reduce $large $before)" \
  "$(run ar-small all_reduce 8:128K:4 COLL_NCCL=1)" "$(run ar-small-before all_reduce 8:128K:4 $before)" \
  "$(run rs reduce_scatter $large COLL_NCCL=1)" "$(run rs-before reduce_scatter $large $before)" || status=1
exit $status
