#!/bin/bash
# One H200: where call a's communicator across nodes hung (its e2e with async calls on; call a's coll runs did not).
# The e2e of 2 virtual nodes of one rank, without and then under MPS; a run still going after 40 s has every
# thread's backtrace taken (hang-backtraces.sh). The e2e carried unstripped (dist/mpi/mpi_comm_nodes_e2e.xz).
scripts/device/unpack-dist.sh
here=bench/results/2026-12-03-h200-queued-calls
COMM_PER_NODE=1 $here/hang-backtraces.sh comm-1 40 mpi_comm_nodes_e2e scripts/device/run-nodes.sh comm
COMM_PER_NODE=1 scripts/device/with-mps.sh $here/hang-backtraces.sh comm-1-mps 40 mpi_comm_nodes_e2e \
  scripts/device/run-nodes.sh comm
