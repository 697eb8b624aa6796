# Session 21 call B: a communicator's first creation in a fresh process (the Communicator creation test,
# COLL log), alternated between three builds: this commit (each rank's thread enables its GPU's peer access
# as soon as every context exists, then loads its kernels), call A's 11ebea7 (dist/extra/P-*: the enables
# after the kernel loads) and 2f25f14 (dist/extra/old-*: twelve enables on one thread after the setup); this
# commit's creation under CUDA_DEVICE_MAX_CONNECTIONS=1/2/4 and without NVML; collectives' speed under
# CUDA_DEVICE_MAX_CONNECTIONS=1 and 4 against the default; then the rest of the GPU tests but the protocol,
# push and copy-engine suites (call C).
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh b
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for x in P old; do xz -dc dist/extra/$x-gpu_test_communicator.xz >dist/$x-gpu_test_communicator && chmod +x dist/$x-gpu_test_communicator; done
source_dir=$(cat dist/SOURCE_DIR)
if [ "$source_dir" != "$PWD" ] && [ ! -e "$source_dir" ]; then mkdir -p "$(dirname "$source_dir")" && ln -sfn "$PWD" "$source_dir"; fi
[ -e build ] || ln -sfn dist build
creation() {  # creation NAME [ENV...]: the creation test in a fresh process, its figures on one line
  local name=$1 exe=$2
  shift 2
  env "$@" PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL timeout 30 $exe --gtest_filter='Communicator.CreatesOnEveryGpu*' >$p/$name.txt 2>&1
  echo "$name: $? $(grep -o 'created in [0-9.]* ms (f[^)]*)' $p/$name.txt | tr '\n' ' ')"
}
for i in 1 2 3 4; do
  creation create-new-$i dist/tests/gpu_test_communicator
  creation create-P-$i dist/P-gpu_test_communicator
  creation create-old-$i dist/old-gpu_test_communicator
done
save
for i in 1 2; do
  for c in 1 2 4; do creation create-conn$c-$i dist/tests/gpu_test_communicator CUDA_DEVICE_MAX_CONNECTIONS=$c; done
  creation create-nonvml-$i dist/tests/gpu_test_communicator PEERLINK_NVML=0
done
save
for c in default 4 1; do
  e=(); [ $c = default ] || e=(CUDA_DEVICE_MAX_CONNECTIONS=$c)
  env "${e[@]}" timeout 90 dist/peerlink coll -o all_reduce -b 8 -e 512M -f 8 -n 50 --no-nccl --json $p/ar-conn-$c.json >$p/ar-conn-$c.txt 2>&1; echo "all_reduce connections $c: $?"
  env "${e[@]}" timeout 60 dist/peerlink coll -o all_gather -b 64M -e 512M -f 2 -n 20 --no-nccl --json $p/ag-conn-$c.json >$p/ag-conn-$c.txt 2>&1; echo "all_gather connections $c: $?"
done
save
for x in signal_channel shared_memory doctor; do t gpu-$x 90 dist/tests/gpu_test_gpu_$x; done
t coll-bench 120 dist/tests/gpu_test_coll_bench
save
t algos 240 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/ONESHOT_*:*/CommunicatorCorrectness.*/TWOSHOT_*:*/CommunicatorCorrectness.*/RING_*'
save
t large 120 dist/tests/gpu_test_communicator --gtest_filter='EveryCollective/CommunicatorLarge.*'
save
