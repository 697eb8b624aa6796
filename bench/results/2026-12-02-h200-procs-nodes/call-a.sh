#!/bin/bash
# One H200 (the only kind lent on 2026-12-02): after host segments began reserving their pages (posix_fallocate)
# and the MPI progress thread and coll's processes began binding near their GPU -- the failure injection and the
# communicator across processes (ranks sharing the GPU); the communicator across 2 virtual nodes x 2 with the
# reductions on the GPU, and a rank killed there; coll --procs 2 on the one GPU with the INFO log: each size's way
# across the processes as describeChoice now says it (crossProcessWay) beside the COLL log's path lines.
# Pack: scripts/device/pack-call.sh gpu_test_failure_injection gpu_test_communicator_processes, then the MPI
# programs into dist/mpi (scripts/device/run-nodes.sh says which).
scripts/device/call.sh a \
  'PEERLINK_TIMEOUT_MS=20000 test failure-injection 200 gpu_test_failure_injection' \
  'PEERLINK_COLL_SHARE_GPUS=1 test processes 200 gpu_test_communicator_processes' \
  'run nodes-comm 150 scripts/device/run-nodes.sh comm' \
  'run nodes-kill 90 scripts/device/run-nodes.sh kill' \
  'PEERLINK_COLL_SHARE_GPUS=1 PEERLINK_DEBUG=INFO coll coll-procs 150 --procs 2 --no-nccl -b 256K -e 256M -f 32 -n 5 -w 2'
