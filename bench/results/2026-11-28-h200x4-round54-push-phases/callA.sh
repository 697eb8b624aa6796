# Session 26 call A: the push reduction in two phases (coll_push_phased.cu: every thread stores this rank's
# pieces into the owners' stages, block b meets block b of every peer once, then reduces its own shard into
# every output; PEERLINK_COLL_PUSH=1 while a shard fits a 16 MiB slot) against the direct-read two-shot.
# First its correctness (every PUSH case of the Communicator suites), then all-reduce and reduce-scatter
# 1-64 MiB alternated, then 200-iteration cells against NCCL at 4-32 MiB.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh a
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t push 240 dist/tests/gpu_test_communicator --gtest_filter='*PUSH*'
t push-shared 240 dist/tests/gpu_test_communicator_shared --gtest_filter='*PUSH*'
save
for i in 1 2; do
  for push in 0 1; do
    for op in all_reduce reduce_scatter; do
      PEERLINK_COLL_PUSH=$push timeout 60 dist/peerlink coll -o $op -b 1M -e 64M -f 2 -n 50 --no-nccl --json $p/$op-push$push-$i.json >$p/$op-push$push-$i.txt 2>&1
      echo "$op push=$push $i: $? $(awk '/peerlink_graph/{f=1} f && /^ +[0-9]+ /{printf "%s:%s ", $1, $6}' $p/$op-push$push-$i.txt)"
    done
  done
  save
done
for push in 1 0; do
  PEERLINK_COLL_PUSH=$push timeout 150 dist/peerlink coll -o all_reduce -b 4M -e 32M -f 2 -n 200 --json $p/ar-nccl-push$push.json >$p/ar-nccl-push$push.txt 2>&1
  echo "all_reduce vs NCCL push=$push: $?"
  save
done
