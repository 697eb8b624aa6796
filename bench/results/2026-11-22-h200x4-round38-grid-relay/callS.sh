# Session 9 call S (experiment build wip/ring-stages 87640ca = main + experiment-ring-stages.diff): the rings
# with 8 packs per thread in flight instead of 4. dist/peerlink: unroll 4 (main's); dist/peerlink-u8: built
# with -DPEERLINK_X_RING_UNROLL=8. PEERLINK_X_RING_CAP caps the ring reduce's grid, PEERLINK_COLL_MAX_BLOCKS
# every grid (the broadcast ring's)
source scripts/device/call-lib.sh s
run() {  # run TAG BIN COLL MIN [ENV...]
  local tag=$1 bin=$2 coll=$3 min=$4; shift 4
  env "$@" PEERLINK_ALGO=RING timeout 60 dist/$bin coll -o $coll -b $min -e 512M -f 2 --no-nccl --json $p/$tag.json > $p/$tag.txt 2>&1
  echo "$tag: exit $? $(grep -E '^ +[0-9]+ ' $p/$tag.txt | awk '{printf "%s ", $6}' | head -c 400)"
}
run reduce-u4 peerlink reduce 16M
run reduce-u8 peerlink-u8 reduce 16M
run reduce-u8-cap64 peerlink-u8 reduce 16M PEERLINK_X_RING_CAP=64
run reduce-u8-cap32 peerlink-u8 reduce 16M PEERLINK_X_RING_CAP=32
run reduce-u8-cap32-chunk32 peerlink-u8 reduce 16M PEERLINK_X_RING_CAP=32 PEERLINK_X_MAXCHUNK_KIB=32
run broadcast-u4 peerlink broadcast 16M
run broadcast-u8 peerlink-u8 broadcast 16M
run broadcast-u8-cap64 peerlink-u8 broadcast 16M PEERLINK_COLL_MAX_BLOCKS=64
run broadcast-u8-cap32 peerlink-u8 broadcast 16M PEERLINK_COLL_MAX_BLOCKS=32
run all_reduce-u4 peerlink all_reduce 64M
run all_reduce-u8 peerlink-u8 all_reduce 64M
run reduce_scatter-u4 peerlink reduce_scatter 16M
run reduce_scatter-u8 peerlink-u8 reduce_scatter 16M
run reduce-u4-again peerlink reduce 16M
save
