#!/bin/bash
# One H200 under MPS, call b's build: the two comparisons call a and b left open, three rounds each, the order
# alternating. Small broadcasts and reduces (8 B - 128 KiB) against the build before (main at 6954d48: call a had the
# one-way broadcasts 0.72-0.88x, call b about 1.0x); and 2 - 32 MiB calls of every collective with the larger calls'
# pieces of 4 MiB (the default) and 2 MiB (call b, two rounds: 0.75-1.08x).
# Pack: as call-a.sh.
scripts/device/unpack-dist.sh
small='COLL_SIZES=8:128K:4 COLL_TIMEOUT=60 COLL_PER_NODE=1'
large='COLL_SIZES=2M:32M:4 COLL_TIMEOUT=90 COLL_PER_NODE=1'
everything='all_reduce reduce_scatter all_gather all_to_all broadcast reduce send_recv'
steps=()
for round in 1 2 3; do
  after="OUT=/tmp/call-c/async-$round $small run async-$round 60 scripts/device/run-nodes.sh coll broadcast reduce"
  before="OUT=/tmp/call-c/before-$round COLL_BUILD=dist/build-before $small run before-$round 60 scripts/device/run-nodes.sh coll broadcast reduce"
  four="OUT=/tmp/call-c/chunk4194304-$round COLL_CHUNK_BYTES=4194304 $large run chunk4194304-$round 90 scripts/device/run-nodes.sh coll $everything"
  two="OUT=/tmp/call-c/chunk2097152-$round COLL_CHUNK_BYTES=2097152 $large run chunk2097152-$round 90 scripts/device/run-nodes.sh coll $everything"
  if [ $((round % 2)) = 1 ]; then steps+=("$before" "$after" "$four" "$two"); else steps+=("$after" "$before" "$two" "$four"); fi
done
scripts/device/with-mps.sh scripts/device/call.sh c "${steps[@]}"
