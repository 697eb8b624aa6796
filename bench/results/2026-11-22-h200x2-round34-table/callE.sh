# Session 7 call E on nvidia-h200-x2: the 2-GPU table at 10a888e (six collectives 8 B - 512 MiB x4 with NCCL)
# and the communicator's AUTO tests on 2 GPUs
export NCCL_NVLS_ENABLE=0
export PEERLINK_NCCL_LIBRARY=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))")
p=/tmp/e; mkdir -p $p
save() { tar czf $OUT/e.tar.gz -C /tmp e; }
nvidia-smi topo -m > $p/topo.txt 2>&1
COLL_TESTS=0 OUT=$p bash scripts/device/run-coll.sh
save
for f in dist/xz/gpu_test_communicator.xz; do xz -dc $f > dist/tests/$(basename $f .xz); chmod +x dist/tests/$(basename $f .xz); done
timeout 120 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*AUTO_*' > $p/comm.txt 2>&1; echo "comm: $? $(grep -E '^\[  (PASSED|FAILED)' $p/comm.txt | tr '\n' ' ')"
save
