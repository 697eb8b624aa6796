# Session 20 call A: eager launches through the kept one-node graphs (PEERLINK_COLL_EAGER_GRAPH=1, the
# default) against direct launches that may overlap the previous kernel (=0), same binary, alternated:
# peerlink_host_cost (the set's last call timed apart from the others'), eager all-reduce 8 B - 64 KiB,
# the other collectives 8 B - 1 MiB, all-reduce against NCCL; then the correctness tests with direct eager
# launches.
source scripts/device/call-lib.sh a
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
nproc
xz -dc dist/extra/peerlink_host_cost.xz >dist/peerlink_host_cost && chmod +x dist/peerlink_host_cost
for i in 1 2; do
  for g in 1 0; do
    PEERLINK_COLL_EAGER_GRAPH=$g timeout 60 dist/peerlink_host_cost 20000 >$p/host-cost-g$g-$i.txt 2>&1
    echo "host cost graph=$g $i: $? $(grep 'allReduce, 4 GPUs' $p/host-cost-g$g-$i.txt | tr -s ' ' | tr '\n' ';')"
  done
done
PEERLINK_COLL_LAUNCH_THREADS=0 timeout 60 dist/peerlink_host_cost 20000 >$p/host-cost-g1-nothreads.txt 2>&1; echo "host cost no threads: $?"
save
for i in 1 2; do
  for g in 1 0; do
    PEERLINK_COLL_EAGER_GRAPH=$g timeout 60 dist/peerlink coll -o all_reduce -b 8 -e 64K -f 2 -n 200 --no-nccl --json $p/ar-g$g-$i.json >$p/ar-g$g-$i.txt 2>&1; echo "all_reduce graph=$g $i: $?"
  done
  save
done
for c in all_gather reduce_scatter all_to_all broadcast reduce; do
  for g in 1 0; do
    PEERLINK_COLL_EAGER_GRAPH=$g timeout 40 dist/peerlink coll -o $c -b 8 -e 1M -f 8 -n 100 --no-nccl --json $p/$c-g$g.json >$p/$c-g$g.txt 2>&1; echo "$c graph=$g: $?"
  done
done
save
for g in 1 0; do
  PEERLINK_COLL_EAGER_GRAPH=$g timeout 90 dist/peerlink coll -o all_reduce -b 8 -e 1M -f 4 -n 200 --json $p/ar-nccl-g$g.json >$p/ar-nccl-g$g.txt 2>&1; echo "all_reduce vs NCCL graph=$g: $?"
  save
done
export PEERLINK_COLL_EAGER_GRAPH=0
t comm 170 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/AUTO_*:Communicator.*'
save
