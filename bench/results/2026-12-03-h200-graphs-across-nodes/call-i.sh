#!/bin/bash
# One H200: a call of several pieces captured as two kernels a piece, the copies in ahead of the copies out (75db11c;
# also the first run of ed79657's moves). Without MPS the e2e on 2 x 1 and 2 x 2 (its graph of nine calls, a 1 MiB
# all-reduce, an all-gather of 512 KiB a rank and a 4 MiB ring shift among them in pieces, run 12 times with new data
# between eager calls; the 2 x 2 step with 240 s: call h's ran out of 110 s). Under MPS, 2 virtual nodes of one rank:
# the e2e on 2 x 1 (its graph timed against the same calls made eagerly), and peerlink coll all-reduce 512 KiB - 32
# MiB eager and in a graph, NCCL split the same way in the same processes.
# Pack: scripts/device/pack-call.sh, then dist/mpi (libpeerlink_mpi.so, mpi_comm_nodes_e2e) and dist/build-ed79657
# (peerlink, libpeerlink_mpi.so of the commit before the change, for call j), stripped, xz.
scripts/device/unpack-dist.sh
scripts/device/call.sh i-checks 'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' \
  'run nodes-comm 240 scripts/device/run-nodes.sh comm'
status=$?
scripts/device/with-mps.sh scripts/device/call.sh i \
  'COMM_PER_NODE=1 run nodes-comm-mps 60 scripts/device/run-nodes.sh comm' \
  "OUT=/tmp/call-i/ar COLL_SIZES=512K:32M:4 COLL_TIMEOUT=130 COLL_PER_NODE=1 COLL_NCCL=1 run ar 150 scripts/device/run-nodes.sh coll all_reduce" || status=1
exit $status
