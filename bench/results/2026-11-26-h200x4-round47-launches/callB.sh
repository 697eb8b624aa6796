# Session 19 call B: launch threads (PEERLINK_COLL_LAUNCH_THREADS, default 1000 us awake) against the calling
# thread's launches (=0) in the same binary, alternated: peerlink_host_cost, eager all-reduce 8 B - 32 MiB
# and the other collectives 8 B - 1 MiB; all-reduce against NCCL; then the tests, the correctness suites with
# the threads kept awake (10 s) so every set takes them.
source scripts/device/call-lib.sh b
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
nproc
xz -dc dist/extra/peerlink_host_cost.xz >dist/peerlink_host_cost && chmod +x dist/peerlink_host_cost
for i in 1 2; do
  for th in 1000 0; do
    PEERLINK_COLL_LAUNCH_THREADS=$th timeout 60 dist/peerlink_host_cost 20000 >$p/host-cost-$th-$i.txt 2>&1
    echo "host cost threads=$th $i: $? $(grep 'allReduce, 4 GPUs' $p/host-cost-$th-$i.txt | tr -s ' ' | tr '\n' ';')"
  done
done
save
for i in 1 2; do
  for th in 1000 0; do
    PEERLINK_COLL_LAUNCH_THREADS=$th timeout 60 dist/peerlink coll -o all_reduce -b 8 -e 32M -f 4 -n 200 --no-nccl --json $p/ar-$th-$i.json >$p/ar-$th-$i.txt 2>&1; echo "all_reduce threads=$th $i: $?"
  done
  save
done
for c in all_gather reduce_scatter all_to_all broadcast reduce; do
  for th in 1000 0; do
    PEERLINK_COLL_LAUNCH_THREADS=$th timeout 40 dist/peerlink coll -o $c -b 8 -e 1M -f 8 -n 100 --no-nccl --json $p/$c-$th.json >$p/$c-$th.txt 2>&1; echo "$c threads=$th: $?"
  done
done
save
timeout 90 dist/peerlink coll -o all_reduce -b 8 -e 32M -f 4 -n 200 --json $p/ar-nccl.json >$p/ar-nccl.txt 2>&1; echo "all_reduce vs NCCL: $?"
save
t threads 60 dist/tests/gpu_test_communicator --gtest_filter='Communicator.LaunchThreads*:Communicator.EagerCalls*:Communicator.RanksMayRunAhead*:CommunicatorRing.*'
save
export PEERLINK_COLL_LAUNCH_THREADS=10000000
t comm 170 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/AUTO_*:Communicator.*:-Communicator.LaunchThreads*'
save
t graph 90 dist/tests/gpu_test_coll_graph
t errors 30 dist/tests/gpu_test_coll_errors
t shared 40 dist/tests/gpu_test_communicator_shared --gtest_filter='Rings/*'
save
