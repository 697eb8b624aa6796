# Session 21 call F: `peerlink coll` reports each side's communicator creation (the peerlink Communicator,
# NCCL's ncclCommInitAll; the GPUs' contexts made before both) in its header and JSON: three all-reduce
# runs against NCCL in fresh processes, 8 B - 512 MiB; the coll bench's GPU tests.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh f
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for i in 1 2 3; do
  timeout 150 dist/peerlink coll -o all_reduce -b 8 -e 512M -f 8 -n 20 --json $p/ar-$i.json >$p/ar-$i.txt 2>&1
  echo "all_reduce $i: $? $(grep 'created in' $p/ar-$i.txt)"
  save
done
t coll-bench 120 dist/tests/gpu_test_coll_bench
save
