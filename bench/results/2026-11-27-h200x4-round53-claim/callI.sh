# Session 25 call I: the direct-read reduction kernel on 256 threads x 4 packs (the new default, call H) against
# 512 x 2 (dist/peerlink-old, round 52's build) for every collective that runs it - all-reduce, reduce-scatter,
# reduce - from 256 KiB to 128 MiB, alternated twice; then the correctness suites of every direct-read user
# (AUTO, ONESHOT, TWOSHOT, the split two-shot, the two-shot reduce, the 64 Mi-element cases), ranks sharing
# GPUs under TWOSHOT, bad input.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
xz -dc dist/extra/peerlink-old.xz >dist/peerlink-old && chmod +x dist/peerlink-old
source scripts/device/call-lib.sh i
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for i in 1 2; do
  for o in all_reduce reduce_scatter reduce; do
    for v in old new; do
      bin=dist/peerlink; [ $v = old ] && bin=dist/peerlink-old
      timeout 60 $bin coll -o $o -b 256K -e 128M -f 2 -n 50 --no-nccl --json $p/$o-$v-$i.json >$p/$o-$v-$i.txt 2>&1
      echo "$o $v $i: $? $(awk '/peerlink_graph/{f=1} f && /^ +[0-9]+ /{printf "%s:%s ", $1, $6}' $p/$o-$v-$i.txt)"
    done
  done
  save
done
t errors 60 dist/tests/gpu_test_coll_errors
t correct 260 dist/tests/gpu_test_communicator \
  --gtest_filter='*AUTO*:*ONESHOT*:*TWOSHOT*:CommunicatorSplitTwoShot.*:CommunicatorTwoShotReduce.*:EveryCollective/CommunicatorLarge.*-*CE_RING*'
save
t shared 60 dist/tests/gpu_test_communicator_shared --gtest_filter='SeveralRanksPerGpu/*TWOSHOT*'
save
