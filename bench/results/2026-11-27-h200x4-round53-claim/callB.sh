# Session 25 call B: the direct-read reduction kernel's warps claiming their 4 KiB units (PEERLINK_COLL_REDUCE_CLAIM;
# call A's blocks claiming with a __syncthreads a unit were 2-3% slower than striding).
# The new GPU test and the pace test (its trace guard moved to a shared header); peerlink_ring_trace's
# two-shot all-reduce at 8, 16 and 32 MiB with claiming on and off alternated (every block's end); the
# all-reduce from 2 to 64 MiB against NCCL with claiming on, then on and off alternated without NCCL. On H200
# also send/recv and the reduce against NCCL, and the all-reduce and reduce-scatter at 512 MiB (the pace).
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
[ -e dist/peerlink_ring_trace ] || { xz -dc dist/extra/peerlink_ring_trace.xz >dist/peerlink_ring_trace && chmod +x dist/peerlink_ring_trace; }
source scripts/device/call-lib.sh b
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
t claim 120 dist/tests/gpu_test_coll_reduce_claim
grep '^\[claim\]' $p/claim.txt | cut -c1-150
t pace 60 dist/tests/gpu_test_coll_ring_pace
save
for mib in 16 8 32; do
  for claim in 1 0; do
    PEERLINK_COLL_REDUCE_CLAIM=$claim timeout 60 dist/peerlink_ring_trace op=all_reduce mib=$mib cells=6 iterations=50 json=$p/ar$mib-claim$claim.json >$p/ar$mib-claim$claim.txt 2>&1
    echo "ar $mib claim=$claim: $? $(grep '^cell' $p/ar$mib-claim$claim.txt | sed 's/.*median \([0-9.]*\).*/\1/' | tr '\n' ' ')"
  done
done
save
timeout 150 dist/peerlink coll -o all_reduce -b 2M -e 64M -f 2 -n 50 --json $p/ar-nccl.json >$p/ar-nccl.txt 2>&1
echo "ar 2M-64M vs NCCL: $?"
grep -E '^ +[0-9]+ ' $p/ar-nccl.txt | head -8
save
for i in 1 2; do
  for claim in 0 1; do
    PEERLINK_COLL_REDUCE_CLAIM=$claim timeout 60 dist/peerlink coll -o all_reduce -b 4M -e 32M -f 2 -n 50 --no-nccl --json $p/ar-claim$claim-$i.json >$p/ar-claim$claim-$i.txt 2>&1
    echo "ar claim=$claim $i: $?"
  done
done
save
case "$gpu" in *H200*) ;; *) exit 0 ;; esac
timeout 100 dist/peerlink coll -o send_recv -b 8 -e 1G -f 2 --json $p/coll-send_recv.json >$p/coll-send_recv.txt 2>&1
echo "send_recv 8-1G: $?"
save
timeout 90 dist/peerlink coll -o reduce -b 64M -e 1G -f 2 --json $p/reduce-nccl.json >$p/reduce-nccl.txt 2>&1
echo "reduce 64M-1G: $?"
save
for i in 1 2; do
  for o in reduce_scatter all_reduce; do
    timeout 60 dist/peerlink coll -o $o -b 512M -e 512M -n 20 --json $p/$o-512-$i.json >$p/$o-512-$i.txt 2>&1
    echo "$o 512M $i: $? $(grep -E '^ +536870912' $p/$o-512-$i.txt | cut -c1-200)"
  done
  save
done
