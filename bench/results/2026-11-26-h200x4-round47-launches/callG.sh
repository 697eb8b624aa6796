# Session 19 call G: call F's eager all-reduce against NCCL (200 iterations) took 8.5-38 us on a host whose
# launches were slower than call B's (a kept graph's launch on one GPU 2.1-2.4 us against 1.2-1.3) and had
# no run without the launch threads beside it. Here, alternated twice: the launch threads at the default
# against none, each with NCCL in the same run and without (--no-nccl).
source scripts/device/call-lib.sh g
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for i in 1 2; do
  for th in 1000 0; do
    PEERLINK_COLL_LAUNCH_THREADS=$th timeout 90 dist/peerlink coll -o all_reduce -b 8 -e 64K -f 2 -n 200 --json $p/ar-nccl-$th-$i.json >$p/ar-nccl-$th-$i.txt 2>&1; echo "with NCCL threads=$th $i: $?"
    PEERLINK_COLL_LAUNCH_THREADS=$th timeout 60 dist/peerlink coll -o all_reduce -b 8 -e 64K -f 2 -n 200 --no-nccl --json $p/ar-solo-$th-$i.json >$p/ar-solo-$th-$i.txt 2>&1; echo "solo threads=$th $i: $?"
  done
  save
done
