# Session 23 call I: the final code. The coll harness's GPU tests (every collective in every configuration,
# the iteration times) and the bad-input tests; on H200 also send/recv 8 B - 1 GiB and the reduce 64 MiB -
# 1 GiB against NCCL in the same run.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh i
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
t bench 300 dist/tests/gpu_test_coll_bench
t errors 120 dist/tests/gpu_test_coll_errors
save
case "$gpu" in *H200*) ;; *) exit 0 ;; esac
timeout 100 dist/peerlink coll -o send_recv -b 8 -e 1G -f 2 --json $p/coll-send_recv.json >$p/coll-send_recv.txt 2>&1
echo "send_recv 8-1G: $?"
save
timeout 90 dist/peerlink coll -o reduce -b 64M -e 1G -f 2 --json $p/reduce-nccl.json >$p/reduce-nccl.txt 2>&1
echo "reduce 64M-1G: $?"
save
grep -A40 "ratio = best" $p/coll-send_recv.txt | grep -E "^ +(8|65536|262144|1073741824) " | cut -c1-100
grep -E "^ +(268435456|536870912|1073741824) +[0-9.]+ +[0-9.]+ +[0-9.]+ +nccl" $p/reduce-nccl.txt | cut -c1-100
