# Session 21 call A: creation with every rank's thread enabling its own GPU's peer access once every context
# exists, against the build before (2f25f14, dist/extra/old-peerlink), alternated in fresh processes with
# the COLL and TOPO logs' breakdown (and the new build without NVML: does discovery slow the contexts?);
# the driver's four contexts under CUDA_DEVICE_MAX_CONNECTIONS settings (context-timing.py); then the GPU tests at this commit: bad input, transport and the other
# small suites (the buffer check now core/pointer_kind), graph, AUTO correctness and the Communicator suites
# (the other executables in call B: the carry limit).
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh a
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
xz -dc dist/extra/old-peerlink.xz >dist/old-peerlink && chmod +x dist/old-peerlink
dist/old-peerlink --version
# Test executables find fixtures and helpers by the paths they were built with (as run-gpu-tests.sh does).
source_dir=$(cat dist/SOURCE_DIR)
if [ "$source_dir" != "$PWD" ] && [ ! -e "$source_dir" ]; then mkdir -p "$(dirname "$source_dir")" && ln -sfn "$PWD" "$source_dir"; fi
[ -e build ] || ln -sfn dist build
for i in 1 2 3 4 5; do
  for b in new old nonvml; do
    cli=dist/peerlink; [ $b = old ] && cli=dist/old-peerlink
    nvml=1; [ $b = nonvml ] && nvml=0
    PEERLINK_NVML=$nvml PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL,TOPO timeout 30 $cli coll -o all_reduce -b 8 -e 8 -n 5 -w 1 --no-nccl >$p/create-$b-$i.txt 2>&1
    echo "create $b $i: $? $(grep -o 'created in [0-9.]* ms ([^;]*;[^;]*;' $p/create-$b-$i.txt | head -1) $(grep -o 'discovered in.*' $p/create-$b-$i.txt | head -1)"
  done
done
save
for i in 1 2; do
  for c in default 1 32; do
    if [ $c = default ]; then env -u CUDA_DEVICE_MAX_CONNECTIONS python3 scripts/device/context-timing.py contexts-parallel >$p/contexts-$c-$i.txt 2>&1
    else CUDA_DEVICE_MAX_CONNECTIONS=$c python3 scripts/device/context-timing.py contexts-parallel >$p/contexts-$c-$i.txt 2>&1; fi
    echo "contexts CUDA_DEVICE_MAX_CONNECTIONS=$c $i: $(tail -1 $p/contexts-$c-$i.txt)"
  done
done
save
t errors 40 dist/tests/gpu_test_coll_errors
for x in raii topology kernels ll bulk_copy transport; do
  t gpu-$x 90 dist/tests/gpu_test_gpu_$x
done
save
t creation 30 dist/tests/gpu_test_communicator --gtest_filter='Communicator.CreatesOnEveryGpu*'
t comm 150 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/AUTO_*:Communicator.*:CommunicatorSplitTwoShot.*:CommunicatorTwoShotReduce.*:CommunicatorRing.*'
save
t graph 120 dist/tests/gpu_test_coll_graph
save
