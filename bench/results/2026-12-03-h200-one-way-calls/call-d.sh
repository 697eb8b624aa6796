#!/bin/bash
# One H200: a reduce's other rank awaits the release again (its messages reach a root that copies in first, where
# they would wait unmatched; calls a-c had small reduces 1.07-1.18x the build before with it not waiting). The GPU
# test; then under MPS 8 B - 128 KiB broadcasts and reduces (every cell checked) of this build (`async`), call b/c's
# (`oneway`: dist/build-oneway, 9d76fbe) and the build before (main at 6954d48), three rounds, the order rotating.
# Pack: scripts/device/pack-call.sh gpu_test_gpu_net_staging; dist/mpi/libpeerlink_mpi.so.xz; dist/build-before and
# dist/build-oneway (each build's peerlink and libpeerlink_mpi.so, stripped, xz). No MPI e2e (the carry limit).
scripts/device/unpack-dist.sh
scripts/device/call.sh d-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging'
status=$?
small='COLL_SIZES=8:128K:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
steps=()
for round in 1 2 3; do
  after="OUT=/tmp/call-d/async-$round $small run async-$round 60 scripts/device/run-nodes.sh coll broadcast reduce"
  oneway="OUT=/tmp/call-d/oneway-$round COLL_BUILD=dist/build-oneway $small run oneway-$round 60 scripts/device/run-nodes.sh coll broadcast reduce"
  before="OUT=/tmp/call-d/before-$round COLL_BUILD=dist/build-before $small run before-$round 60 scripts/device/run-nodes.sh coll broadcast reduce"
  case $round in
    1) steps+=("$before" "$oneway" "$after") ;;
    2) steps+=("$oneway" "$after" "$before") ;;
    3) steps+=("$after" "$before" "$oneway") ;;
  esac
done
scripts/device/with-mps.sh scripts/device/call.sh d "${steps[@]}" || status=1
exit $status
