# Session 27 call B: the pipelined push kernel removed (coll_push_reduce.cu); PEERLINK_COLL_PUSH=1 pushes shards
# past a 16 MiB stage slot in parts, the two-phase kernel once per slot. Its tests (CommunicatorPush's new
# part cases, every PUSH case, ranks sharing GPUs), then the same sizes under PEERLINK_COLL_PUSH=1 on this
# build and on 025f52f (the pipelined kernel), alternating, and AUTO's pushed all-reduce on both (unchanged
# code, so equal); then peerlink_push_fanout's copy engines one after another on one stream (ce) against
# side by side (ce-streams).
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
xz -dc dist/extra/peerlink-025f52f.xz >dist/peerlink-old && chmod +x dist/peerlink-old
source scripts/device/call-lib.sh b
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
dist/peerlink-old --version
t comm 300 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorPush.*:*PUSH*:CommunicatorSplitTwoShot.*'
grep -E "^16 MiB|^96 MiB" $p/comm.txt
t shared 200 dist/tests/gpu_test_communicator_shared --gtest_filter='*PUSH*:*AUTO*'
save
cell() { awk '/peerlink_graph/{f=1} f && /^ +[0-9]+ /{printf "%s:%s/%s#%s ", $1, $6, $10, $9+$13}' "$1"; }
for i in 1 2; do
  for build in new old; do
    bin=dist/peerlink; [ $build = old ] && bin=dist/peerlink-old
    for spec in "all_reduce 64M" "all_reduce 96M" "reduce_scatter 80M" "reduce_scatter 112M"; do
      set -- $spec
      PEERLINK_COLL_PUSH=1 timeout 60 $bin coll -o $1 -b $2 -e $2 -n 20 --no-nccl --json $p/push-$1-$2-$build-$i.json >$p/push-$1-$2-$build-$i.txt 2>&1
      echo "PUSH=1 $1 $2 $build $i: $? $(cell $p/push-$1-$2-$build-$i.txt)"
    done
    timeout 60 $bin coll -o all_reduce -b 16M -e 64M -f 2 -n 50 --no-nccl --json $p/auto-$build-$i.json >$p/auto-$build-$i.txt 2>&1
    echo "AUTO all_reduce 16-64M $build $i: $? $(cell $p/auto-$build-$i.txt)"
    save
  done
done
for mib in 8 16; do
  timeout 90 dist/peerlink_push_fanout 21 $mib 0 50 >$p/fanout-$mib.txt 2>&1
  echo "fanout $mib MiB: $?"; cat $p/fanout-$mib.txt
done
save
