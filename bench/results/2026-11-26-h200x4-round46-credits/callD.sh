# Session 18 call D (ee9bfc3: credits, the reduce's ring from 16 MiB): the reduce against NCCL's three
# configurations, 4 MiB - 1 GiB, and the back-to-back ring test.
source scripts/device/call-lib.sh d
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t back-to-back 60 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorRing.*'
save
timeout 150 dist/peerlink coll -o reduce -b 4M -e 1G -f 2 --json $p/reduce-nccl.json >$p/reduce-nccl.txt 2>&1; echo "reduce vs NCCL: $?"
save
