# Session 16 call F: fewer rounds in flight per ring block. Round 38 measured the signal warp's release
# landing ~10 us after a round's stores under load (the bytes queued ahead of them); with the neighbour start
# each call still pays about one such hop. Binaries built with kRingStages 2 and 3 (the experiment diffs;
# main has 4) against main, forced ring, peerlink alone, unchecked: reduce, broadcast, reduce-scatter,
# all-reduce; main's reduce and broadcast again last for the spread.
source scripts/device/call-lib.sh f
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for s in 2 3; do xz -dc dist/extra/peerlink-stages$s.xz >dist/peerlink-stages$s && chmod +x dist/peerlink-stages$s; done
sweep() {  # sweep NAME BINARY COLLECTIVE FROM
  env PEERLINK_ALGO=RING timeout 60 $2 coll -o $3 -b $4 -e 1G -f 2 -n 10 -w 3 -c 0 --no-nccl --json $p/$1.json >$p/$1.txt 2>&1
  echo "$1: $?"
}
for v in main stages2 stages3; do
  bin=dist/peerlink
  [ $v = main ] || bin=dist/peerlink-$v
  sweep rd-$v $bin reduce 4M
  sweep bc-$v $bin broadcast 4M
  sweep rs-$v $bin reduce_scatter 8M
  sweep ar-$v $bin all_reduce 32M
  save
done
sweep rd-main-again dist/peerlink reduce 4M
sweep bc-main-again dist/peerlink broadcast 4M
save
