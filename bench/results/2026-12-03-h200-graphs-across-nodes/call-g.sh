#!/bin/bash
# One H200: collectives of any size captured across nodes, each phase between nodes as async calls of a piece each
# (71296c3, the session's last). Without MPS the checks: the GPU test, the e2e on 2 x 1 and 2 x 2 (its graph now with a
# 1 MiB all-reduce and a 512 KiB-a-rank all-gather in pieces, a 4 MiB ring shift refused), a killed rank, a stalled
# stream before an async call, the transport's collectives. Under MPS, 2 virtual nodes of one rank, NCCL split the same
# way: peerlink coll all-reduce 8 B - 32 MiB and all-gather 1 KiB - 32 MiB, eager and in a graph; the e2e on 2 x 1.
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so and the two MPI e2e
# tests, stripped, xz).
scripts/device/unpack-dist.sh
scripts/device/call.sh g-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' 'run nodes-comm 100 scripts/device/run-nodes.sh comm' \
  'run nodes-kill 40 scripts/device/run-nodes.sh kill' 'run nodes-stall-async 30 scripts/device/run-nodes.sh stall-async' \
  'run nodes-net 60 scripts/device/run-nodes.sh net'
status=$?
scripts/device/with-mps.sh scripts/device/call.sh g \
  "OUT=/tmp/call-g/ar COLL_SIZES=8:32M:4 COLL_TIMEOUT=150 COLL_PER_NODE=1 COLL_NCCL=1 run ar 170 scripts/device/run-nodes.sh coll all_reduce" \
  "OUT=/tmp/call-g/ag COLL_SIZES=1K:32M:8 COLL_TIMEOUT=150 COLL_PER_NODE=1 COLL_NCCL=1 run ag 170 scripts/device/run-nodes.sh coll all_gather" \
  'COMM_PER_NODE=1 run nodes-comm-mps 90 scripts/device/run-nodes.sh comm' || status=1
exit $status
