# Session 26 call B: the two-phase push with each block's walk in two halves, each released on its own flag
# (the signalling warp's fence waits for the first half while the others push the second), against call A's
# build (one meeting, dist/extra/peerlink-a) and the direct reads, all-reduce 4-64 MiB alternated twice;
# then the PUSH correctness cases, and the halves against NCCL in 200-iteration cells.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
[ -e dist/peerlink-a ] || { xz -dc dist/extra/peerlink-a.xz >dist/peerlink-a && chmod +x dist/peerlink-a; }
source scripts/device/call-lib.sh b
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for i in 1 2; do
  for v in direct a halves; do
    bin=dist/peerlink; push=1
    [ $v = a ] && bin=dist/peerlink-a
    [ $v = direct ] && push=0
    PEERLINK_COLL_PUSH=$push timeout 60 $bin coll -o all_reduce -b 4M -e 64M -f 2 -n 50 --no-nccl --json $p/ar-$v-$i.json >$p/ar-$v-$i.txt 2>&1
    echo "$v $i: $? $(awk '/peerlink_graph/{f=1} f && /^ +[0-9]+ /{printf "%s:%s ", $1, $6}' $p/ar-$v-$i.txt)"
  done
  save
done
t push 240 dist/tests/gpu_test_communicator --gtest_filter='*PUSH*'
t push-shared 240 dist/tests/gpu_test_communicator_shared --gtest_filter='*PUSH*'
save
PEERLINK_COLL_PUSH=1 timeout 150 dist/peerlink coll -o all_reduce -b 8M -e 64M -f 2 -n 200 --json $p/ar-nccl-halves.json >$p/ar-nccl-halves.txt 2>&1
echo "all_reduce vs NCCL, halves: $? $(awk '/vs the best NCCL/{f=1} f && /^ +[0-9]+ /{printf "%s:%s/%s ", $1, $6, $7}' $p/ar-nccl-halves.txt)"
save
