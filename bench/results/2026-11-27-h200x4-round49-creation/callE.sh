# Session 21 call E: the communicator's topology kept for the process (topology/discovery_cache.cc):
# creations first and again in fresh processes (the later ones now skip discovery), the CLI's creation
# (its own discovery now the communicator's), the GPU topology tests with the new kept-topology test, bad
# input, the Communicator suites, AUTO correctness.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh e
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
source_dir=$(cat dist/SOURCE_DIR)
if [ "$source_dir" != "$PWD" ] && [ ! -e "$source_dir" ]; then mkdir -p "$(dirname "$source_dir")" && ln -sfn "$PWD" "$source_dir"; fi
[ -e build ] || ln -sfn dist build
for i in 1 2 3; do
  PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL,TOPO timeout 30 dist/tests/gpu_test_communicator --gtest_filter='Communicator.CreatesOnEveryGpu*' >$p/create-$i.txt 2>&1
  echo "create $i: $? $(grep -o 'created in [0-9.]* ms ([fa][^)]*)' $p/create-$i.txt | tr '\n' ' ')"
  PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL,TOPO timeout 30 dist/peerlink coll -o all_reduce -b 8 -e 8 -n 5 -w 1 --no-nccl >$p/cli-$i.txt 2>&1
  echo "cli $i: $? $(grep -o 'created in [0-9.]* ms ([^;]*;[^;]*;' $p/cli-$i.txt | head -1) $(grep -c 'discovered in' $p/cli-$i.txt) discoveries"
done
save
t gpu-topology 60 dist/tests/gpu_test_gpu_topology
t errors 40 dist/tests/gpu_test_coll_errors
t comm 150 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/AUTO_*:Communicator.*:CommunicatorSplitTwoShot.*:CommunicatorTwoShotReduce.*:CommunicatorRing.*'
save
