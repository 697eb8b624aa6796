# Session 20 call E: call B's comparison again with more alternations (its single runs of the other
# collectives disagreed by +-1.5 us both ways): the new build (479bddf) against the old (0213ba3), eager,
# four times all-reduce 8 B - 64 KiB and three times each other collective 8 B - 1 MiB, new first then old
# in each pair; the COLL log counts the new build's kept-graph launches and re-aims.
# The CLI travels compressed (the carry limit): unpacked before call-lib.sh runs it.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh e
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for x in peerlink_host_cost old-peerlink_host_cost old-peerlink; do xz -dc dist/extra/$x.xz >dist/$x && chmod +x dist/$x; done
export PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL
for i in 1 2 3 4; do
  for b in new old; do
    cli=dist/peerlink; [ $b = old ] && cli=dist/old-peerlink
    timeout 60 $cli coll -o all_reduce -b 8 -e 64K -f 2 -n 200 --no-nccl --json $p/ar-$b-$i.json >$p/ar-$b-$i.txt 2>&1; echo "all_reduce $b $i: $?"
  done
done
save
for i in 1 2 3; do
  for c in all_gather reduce_scatter all_to_all broadcast reduce; do
    for b in new old; do
      cli=dist/peerlink; [ $b = old ] && cli=dist/old-peerlink
      timeout 40 $cli coll -o $c -b 8 -e 1M -f 8 -n 100 --no-nccl --json $p/$c-$b-$i.json >$p/$c-$b-$i.txt 2>&1; echo "$c $b $i: $?"
    done
  done
  save
done
for i in 1 2; do
  for b in new old; do
    tool=dist/peerlink_host_cost; [ $b = old ] && tool=dist/old-peerlink_host_cost
    timeout 60 $tool 20000 >$p/host-cost-$b-$i.txt 2>&1; echo "host cost $b $i: $?"
  done
done
save
