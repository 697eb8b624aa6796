# Session 21 call C: a communicator's first creation in a fresh process (the Communicator creation test,
# COLL and TOPO logs), alternated between this commit (topology discovery starts once the last GPU's context
# exists, the peer enables overlapping it) and f90a144 (dist/extra/S-*: discovery starts with the contexts);
# this commit under CUDA_DEVICE_MAX_CONNECTIONS=4; then the protocol, push, copy-engine, LL128 and
# shared-GPU suites at this commit.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh c
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
xz -dc dist/extra/S-gpu_test_communicator.xz >dist/S-gpu_test_communicator && chmod +x dist/S-gpu_test_communicator
source_dir=$(cat dist/SOURCE_DIR)
if [ "$source_dir" != "$PWD" ] && [ ! -e "$source_dir" ]; then mkdir -p "$(dirname "$source_dir")" && ln -sfn "$PWD" "$source_dir"; fi
[ -e build ] || ln -sfn dist build
creation() {  # creation NAME EXECUTABLE [ENV...]: the creation test in a fresh process, its figures on one line
  local name=$1 exe=$2
  shift 2
  env "$@" PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL,TOPO timeout 30 $exe --gtest_filter='Communicator.CreatesOnEveryGpu*' >$p/$name.txt 2>&1
  echo "$name: $? $(grep -o 'created in [0-9.]* ms (f[^)]*)' $p/$name.txt | tr '\n' ' ') $(grep -o 'discovered in.*' $p/$name.txt | head -1)"
}
for i in 1 2 3 4 5; do
  creation create-new-$i dist/tests/gpu_test_communicator
  creation create-S-$i dist/S-gpu_test_communicator
done
for i in 1 2; do creation create-conn4-$i dist/tests/gpu_test_communicator CUDA_DEVICE_MAX_CONNECTIONS=4; done
save
t proto 240 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/PROTO_*:*/CommunicatorCorrectness.*/PUSH_*'
save
t ce 180 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/CE_*'
save
t ll128 60 dist/tests/gpu_test_coll_ll128
t shared 60 dist/tests/gpu_test_communicator_shared
t errors 40 dist/tests/gpu_test_coll_errors
save
