# Session 14 call E: communicator creation with the copy streams, and the copy engines on 2 GPUs (AUTO's
# rule was measured on 4): PEERLINK_COLL_CE=1 against 0 for all-gather, all-to-all and all-reduce, 64 MiB - 1 GiB.
source scripts/device/call-lib.sh e
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t creation 60 dist/tests/gpu_test_communicator --gtest_filter='Communicator.CreatesOnEveryGpuAndReportsCreationTime'
grep -i "creat" $p/creation.txt | head -5
save
for c in all_gather all_to_all all_reduce; do
  for ce in 1 0; do
    PEERLINK_COLL_CE=$ce timeout 60 dist/peerlink coll -o $c -g 2 -b 64M -e 1G -f 2 --no-nccl --json $p/coll-$c-g2-ce$ce.json >$p/coll-$c-g2-ce$ce.txt 2>&1; echo "$c g2 ce=$ce: $?"
  done
  save
done
