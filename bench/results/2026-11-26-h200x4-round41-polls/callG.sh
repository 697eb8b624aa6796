# Session 13 call G on nvidia-h200-x4 (whichever 4-GPU machine comes): where an eager collective's host
# time goes -- the CUDA runtime queries its validation makes and whole eager 8-byte all-reduce calls
# (tools/tune/host_call_cost.cc), twice; and eager all-reduce beside NCCL plain, 8 B - 64 KiB.
source scripts/device/call-lib.sh g
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
lscpu | grep -E "Model name|^CPU\(s\)|MHz" | head -4
for round in 1 2; do dist/peerlink_host_cost 20000 2>&1 | tee $p/host-cost-r$round.txt; done
timeout 60 dist/peerlink coll -o all_reduce -b 8 -e 64K -f 4 -n 200 --json $p/eager.json >$p/eager.txt 2>&1; echo "eager: $?"
grep -E "^ +[0-9]+ " $p/eager.txt | head -6 | cut -c1-100
save
