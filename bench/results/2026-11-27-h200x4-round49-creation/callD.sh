# Session 21 call D: the final build (creation as at 2f25f14, the pointer check in core/pointer_kind, the
# discovery's stage times): its first creation in fresh processes at the driver's default hardware queues
# and under CUDA_DEVICE_MAX_CONNECTIONS=4 and 1, alternated; the bad-input tests, the Communicator suites and
# every shared-GPU test (127: call C ran 77 of them in its 60 s).
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh d
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
source_dir=$(cat dist/SOURCE_DIR)
if [ "$source_dir" != "$PWD" ] && [ ! -e "$source_dir" ]; then mkdir -p "$(dirname "$source_dir")" && ln -sfn "$PWD" "$source_dir"; fi
[ -e build ] || ln -sfn dist build
creation() {  # creation NAME [ENV...]: the creation test in a fresh process, its figures on one line
  local name=$1
  shift
  env "$@" PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL,TOPO timeout 30 dist/tests/gpu_test_communicator --gtest_filter='Communicator.CreatesOnEveryGpu*' >$p/$name.txt 2>&1
  echo "$name: $? $(grep -o 'created in [0-9.]* ms ([fa][^)]*)' $p/$name.txt | tr '\n' ' ')"
}
for i in 1 2 3; do
  creation create-default-$i
  creation create-conn4-$i CUDA_DEVICE_MAX_CONNECTIONS=4
  creation create-conn1-$i CUDA_DEVICE_MAX_CONNECTIONS=1
done
save
t errors 40 dist/tests/gpu_test_coll_errors
t comm-suites 120 dist/tests/gpu_test_communicator --gtest_filter='Communicator.*:CommunicatorSplitTwoShot.*:CommunicatorTwoShotReduce.*:CommunicatorRing.*'
save
t shared 300 dist/tests/gpu_test_communicator_shared
save
