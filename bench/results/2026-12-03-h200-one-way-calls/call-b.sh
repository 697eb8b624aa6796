#!/bin/bash
# One H200: call a's build with the async kernel's copied-out flag a relaxed store (call a: a release at system scope,
# and every async call a microsecond slower than the build before), and the kernel's copies with 16 words in flight a
# thread (one block reading pinned memory across PCIe had 8 KiB in flight). The GPU test (the kernel's copies of 1 B
# to 256 KiB at every alignment) and the e2e's 112 calls on 2 x 1 and 2 x 2 without MPS, then under MPS 8 B - 128 KiB
# async against the build before (main at 6954d48), three rounds, the order
# alternating (before first in rounds 1 and 3); and 2 - 32 MiB calls with pieces of 4, 2 and 1 MiB.
# Pack: as call-a.sh.
scripts/device/unpack-dist.sh
scripts/device/call.sh b-checks 'test gpu-net-staging 60 gpu_test_gpu_net_staging' \
  'COMM_PER_NODE=1 run nodes-comm-1 60 scripts/device/run-nodes.sh comm' 'run nodes-comm 60 scripts/device/run-nodes.sh comm'
status=$?
common='COLL_SIZES=8:128K:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
collectives='broadcast reduce all_reduce send_recv'
steps=()
for round in 1 2 3; do
  after="OUT=/tmp/call-b/async-$round $common run async-$round 60 scripts/device/run-nodes.sh coll $collectives"
  before="OUT=/tmp/call-b/before-$round COLL_BUILD=dist/build-before $common run before-$round 60 scripts/device/run-nodes.sh coll $collectives"
  if [ $((round % 2)) = 1 ]; then steps+=("$before" "$after"); else steps+=("$after" "$before"); fi
done
# Larger calls' pieces (PEERLINK_NET_CHUNK_BYTES) at 2, 8 and 32 MiB: 4 MiB (the default), 2 MiB and 1 MiB, two rounds.
large='COLL_SIZES=2M:32M:4 COLL_TIMEOUT=90 COLL_PER_NODE=1'
everything='all_reduce reduce_scatter all_gather all_to_all broadcast reduce send_recv'
for round in 1 2; do
  for chunk in 4194304 2097152 1048576; do
    steps+=("OUT=/tmp/call-b/chunk$chunk-$round COLL_CHUNK_BYTES=$chunk $large run chunk$chunk-$round 90 scripts/device/run-nodes.sh coll $everything")
  done
done
scripts/device/with-mps.sh scripts/device/call.sh b "${steps[@]}" || status=1
exit $status
