#!/bin/bash
# Prepared, not run yet: call h again on main (its 2 x 2 step ran out of 110 s), the 2 x 2 step given 240 s. The e2e
# on 2 x 1 and 2 x 2: its graph of nine calls (a 1 MiB all-reduce, an all-gather of 512 KiB a rank and a 4 MiB ring
# shift among them, in pieces) run 12 times with new data between eager calls.
# Pack: scripts/device/pack-call.sh, then dist/mpi (libpeerlink_mpi.so, mpi_comm_nodes_e2e), stripped, xz.
scripts/device/unpack-dist.sh
scripts/device/call.sh i-checks 'COMM_PER_NODE=1 run nodes-comm-1 90 scripts/device/run-nodes.sh comm' \
  'run nodes-comm 240 scripts/device/run-nodes.sh comm'
