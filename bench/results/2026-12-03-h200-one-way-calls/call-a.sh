#!/bin/bash
# One H200: small calls across nodes whose messages go one way on a rank. A rank whose messages only leave it (a
# broadcast's root, a reduce's other rank) copies out what it copied in and ends without waiting for them; a rank that
# copies nothing in (a broadcast's other rank) runs its messages before its stream gets to the call. The checks
# without MPS first (GPU test, the e2e's 112 calls on 2 x 1 and 2 x 2, a killed rank, a stalled stream before an async
# call, the transport), then under MPS 8 B - 128 KiB: every call waiting (PEERLINK_NET_ASYNC=OFF), async with this
# build, async with the build before (main at 6954d48), two rounds each; NCCL split the same way once.
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging, then dist/mpi (libpeerlink_mpi.so and the two MPI e2e
# tests, stripped, xz) and dist/build-before (main at 6954d48: its peerlink and libpeerlink_mpi.so, stripped, xz).
scripts/device/unpack-dist.sh
scripts/device/call.sh a-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 60 scripts/device/run-nodes.sh comm' 'run nodes-comm 60 scripts/device/run-nodes.sh comm' \
  'run nodes-kill 40 scripts/device/run-nodes.sh kill' 'run nodes-stall-async 30 scripts/device/run-nodes.sh stall-async' \
  'run nodes-net 60 scripts/device/run-nodes.sh net'
status=$?
common='COLL_SIZES=8:128K:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
collectives='broadcast reduce all_reduce send_recv'
steps=()
for round in 1 2; do
  steps+=("OUT=/tmp/call-a/sync-$round PEERLINK_NET_ASYNC=OFF $common run sync-$round 60 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-a/async-$round $common run async-$round 60 scripts/device/run-nodes.sh coll $collectives")
  steps+=("OUT=/tmp/call-a/before-$round COLL_BUILD=dist/build-before $common run before-$round 60 scripts/device/run-nodes.sh coll $collectives")
done
steps+=("OUT=/tmp/call-a/nccl-1 COLL_NCCL=1 $common run nccl-1 90 scripts/device/run-nodes.sh coll $collectives")
scripts/device/with-mps.sh scripts/device/call.sh a "${steps[@]}" || status=1
exit $status
