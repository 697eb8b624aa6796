# Session 13 call I on nvidia-h200-x4 (whichever 4-GPU machine comes): the final code (a reduce's LL128
# budget in lines, clang-format) -- the one-shot and AUTO correctness tests on 4 GPUs and 3/4/8 shared
# ranks, the error tests, and AUTO against NCCL for all-reduce and reduce 8 B - 4 MiB.
source scripts/device/call-lib.sh i
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t sanity 60 dist/tests/gpu_test_coll_ll128
t errors 60 dist/tests/gpu_test_coll_errors
t auto 150 dist/tests/gpu_test_communicator --gtest_filter='*AUTO*:*Eager*'
save
t shared 120 dist/tests/gpu_test_communicator_shared --gtest_filter='*AUTO*'
save
for c in all_reduce reduce; do
  timeout 60 dist/peerlink coll -o $c -b 8 -e 4M -f 4 -n 100 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1; echo "$c: $?"
done
for f in $p/coll-*.json; do python3 scripts/coll_compare.py $f; done >$p/compare.md
save
