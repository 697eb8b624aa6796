# Session 26 call C: AUTO pushes all-reduces in two phases from 16 MiB (shards within a 16 MiB slot, 3+ ranks
# of an NVLink mesh; its stages allocated at creation). Its tests (the new CommunicatorPush case on both push
# kernels, every PUSH case, ranks sharing GPUs under AUTO and PUSH, bad input, the Communicator cases); the
# creation in fresh processes with and without the stages (PEERLINK_COLL_PUSH=0 allocates none); all-reduce
# 8 B - 1 GiB against NCCL, 200-iteration cells at 4-64 MiB, and the two-phase kernel on fewer blocks.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh c
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t comm 300 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorPush.*:*PUSH*:Communicator.*:CommunicatorSplitTwoShot.*'
grep -E "^16 MiB|^96 MiB" $p/comm.txt
t shared 240 dist/tests/gpu_test_communicator_shared --gtest_filter='*AUTO*:*PUSH*'
t errors 120 dist/tests/gpu_test_coll_errors
save
for i in 1 2 3; do
  for push in AUTO 0; do
    PEERLINK_COLL_PUSH=$push timeout 60 dist/tests/gpu_test_communicator --gtest_filter='Communicator.CreatesOnEveryGpuAndReportsCreationTime' >$p/create-$push-$i.txt 2>&1
    echo "create push=$push $i: $(grep -o 'created in [0-9.]* ms ([a-z ]*' $p/create-$push-$i.txt | tr '\n' ' ')"
  done
done
save
s=$(date +%s)
timeout 200 dist/peerlink coll -o all_reduce -b 8 -e 1G -f 2 --json $p/coll-all_reduce.json >$p/coll-all_reduce.txt 2>&1
echo "all_reduce 8-1G: exit $? in $(( $(date +%s) - s )) s $(awk '/vs the best NCCL/{f=1} f && /^ +[0-9]+ /{printf "%s:%s ", $1, $7}' $p/coll-all_reduce.txt)"
save
timeout 150 dist/peerlink coll -o all_reduce -b 4M -e 64M -f 2 -n 200 --json $p/ar-nccl-200.json >$p/ar-nccl-200.txt 2>&1
echo "all_reduce 4-64M x200: $? $(awk '/vs the best NCCL/{f=1} f && /^ +[0-9]+ /{printf "%s:%s/%s ", $1, $6, $7}' $p/ar-nccl-200.txt)"
save
for blocks in 132 112 96 66; do
  PEERLINK_COLL_MAX_BLOCKS=$blocks timeout 60 dist/peerlink coll -o all_reduce -b 16M -e 64M -f 2 -n 50 --no-nccl --json $p/ar-b$blocks.json >$p/ar-b$blocks.txt 2>&1
  echo "blocks=$blocks: $? $(awk '/peerlink_graph/{f=1} f && /^ +[0-9]+ /{printf "%s:%s ", $1, $6}' $p/ar-b$blocks.txt)"
done
save
