# Session 12 call B on nvidia-h200-x2, the binary of call A: where LL128's extra ~0.55 us comes from (one
# rank, -g 1: the kernel's own path with no peer to store to or poll), then every communicator test at this
# code (every algorithm x collective, the 64M-element ones, graphs, errors), as far as the time allows.
source scripts/device/call-lib.sh b
for proto in LL LL128 SIMPLE; do
  PEERLINK_PROTO=$proto timeout 60 dist/peerlink coll --no-nccl -g 1 -o all_reduce -b 8 -e 1M -f 4 -n 200 --json $p/g1-ar-$proto.json >$p/g1-ar-$proto.txt 2>&1; echo "g1 ar $proto: $?"
done
python3 scripts/coll_compare.py $p/g1-ar-LL.json $p/g1-ar-LL128.json $p/g1-ar-SIMPLE.json | tee $p/compare-g1-all_reduce.md
save
t graph 90 dist/tests/gpu_test_coll_graph
t errors 90 dist/tests/gpu_test_coll_errors
save
t communicator 330 dist/tests/gpu_test_communicator
save
grep -E "^\[ +(OK|FAILED) +\]" $p/communicator.txt | awk '{print $4}' | tr '\n' ' ' | cut -c1-3000; echo
