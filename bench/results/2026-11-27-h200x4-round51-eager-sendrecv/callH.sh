# Session 23 call H: do eager calls hold one rate when their kernels overlap their predecessors as in a
# graph? The reduce-scatter and the all-reduce at 512 MiB, 50 iterations timed one by one, four fresh
# processes each, alternating the default eager launches (through each rank's kernel graph) with direct
# launches (PEERLINK_COLL_EAGER_GRAPH=0: programmatic dependent launch, as captured kernels have).
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh h
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for i in 1 2 3 4; do
  for g in 1 0; do
    for op in reduce_scatter all_reduce; do
      PEERLINK_COLL_EAGER_GRAPH=$g timeout 60 dist/peerlink coll -o $op -b 512M -e 512M -n 50 -w 5 --no-nccl \
        --iteration-times --json $p/$op-g$g-$i.json >$p/$op-g$g-$i.txt 2>&1 || echo "$op g$g $i failed"
    done
  done
done
save
for g in 1 0; do
  for op in reduce_scatter all_reduce; do
    echo "$op graph=$g: $(grep -hE '^ +536870912 ' $p/$op-g$g-?.txt | awk 'NR%2==1 {printf "%s/%s ", $8, $12}')"
  done
done
