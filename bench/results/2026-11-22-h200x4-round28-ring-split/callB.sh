# Session 6 call B: split all-reduce timing against main's binary; ring broadcast 128-512 MiB
export NCCL_NVLS_ENABLE=0
export PEERLINK_NCCL_LIBRARY=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))")
p=/tmp/b; mkdir -p $p
xz -dc dist/wip/peerlink-main.xz > /tmp/peerlink-main && chmod +x /tmp/peerlink-main
save() { tar czf $OUT/b.tar.gz -C /tmp b; }
timeout 150 dist/peerlink coll -o all_reduce -b 32M -e 1G -f 2 --json $p/ar-new.json > $p/ar-new.txt 2>&1; echo "ar new: $?"
timeout 60 /tmp/peerlink-main coll -o all_reduce -b 32M -e 1G -f 2 --no-nccl --json $p/ar-main.json > $p/ar-main.txt 2>&1; echo "ar main: $?"
python3 scripts/coll_compare.py $p/ar-new.json $p/ar-main.json 2>&1 | grep -E "^\|"
save
for a in RING TWOSHOT; do PEERLINK_ALGO=$a timeout 60 dist/peerlink coll -o broadcast -b 64M -e 1G -f 2 --no-nccl --json $p/bc-$a.json > $p/bc-$a.txt 2>&1; echo "bc $a: $?"; done
python3 scripts/coll_compare.py $p/bc-TWOSHOT.json $p/bc-RING.json 2>&1 | grep -E "^\|"
save
timeout 120 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*Large*' > $p/large.txt 2>&1; echo "large: $? $(grep -E '^\[  (PASSED|FAILED)' $p/large.txt | tr '\n' ' ')"; grep -E "^\[ +(OK|FAILED)" $p/large.txt
save
