# Session 6 call A: ring broadcast + split all-reduce (wip/combined), tests and benchmarks against main's binary
export NCCL_NVLS_ENABLE=0
export PEERLINK_NCCL_LIBRARY=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))")
p=$OUT/a; mkdir -p $p
xz -dc dist/wip/peerlink-main.xz > /tmp/peerlink-main && chmod +x /tmp/peerlink-main
save() { tar czf $OUT/a.tar.gz -C $OUT a; }
t() { local name=$1 limit=$2; shift 2; timeout $limit "$@" > $p/$name.txt 2>&1; echo "$name: exit $? $(grep -E '^\[  (PASSED|FAILED) *\]' $p/$name.txt | tr '\n' ' ')"; }
t comm-new 150 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*RING_broadcast*:*Split*:*AUTO*:*TWOSHOT*:*Large*/all_reduce:*Large*/broadcast:Communicator.*'
grep -E "^\[  FAILED" $p/comm-new.txt | head
save
t shared-ring 150 dist/tests/gpu_test_communicator_shared --gtest_color=no --gtest_filter='RingBroadcast*:*AUTO_all_reduce*:*TWOSHOT_all_reduce*:*TWOSHOT_reduce*'
grep -E "^\[  FAILED" $p/shared-ring.txt | head
save
for v in new main; do
  b=dist/peerlink; [ $v = main ] && b=/tmp/peerlink-main
  nn=; [ $v = main ] && nn=--no-nccl
  timeout 60 $b coll -o all_reduce -b 16M -e 1G -f 2 $nn --json $p/ar-$v.json > $p/ar-$v.txt 2>&1; echo "ar $v: $?"
  timeout 60 $b coll -o broadcast -b 2M -e 1G -f 4 $nn --json $p/bc-$v.json > $p/bc-$v.txt 2>&1; echo "bc $v: $?"
done
PEERLINK_ALGO=RING timeout 60 dist/peerlink coll -o broadcast -b 2M -e 1G -f 4 --no-nccl --json $p/bc-ring.json > $p/bc-ring.txt 2>&1; echo "bc ring: $?"
for b in 32 64 132; do PEERLINK_COLL_MAX_BLOCKS=$b PEERLINK_ALGO=RING timeout 40 dist/peerlink coll -o broadcast -b 8M -e 512M -f 4 --no-nccl --json $p/bc-ring-b$b.json > $p/bc-ring-b$b.txt 2>&1; done
save
python3 scripts/coll_compare.py $p/ar-new.json $p/ar-main.json 2>&1 | grep -E "^\|"
python3 scripts/coll_compare.py $p/bc-new.json $p/bc-main.json $p/bc-ring.json $p/bc-ring-b32.json $p/bc-ring-b64.json $p/bc-ring-b132.json 2>&1 | grep -E "^\|"
timeout 60 dist/peerlink coll -o reduce -g 2 -b 8M -e 512M -f 8 --no-nccl > $p/reduce-2gpu.txt 2>&1; echo "reduce 2 gpus: $?"
PEERLINK_ALGO=TWOSHOT timeout 60 dist/peerlink coll -o reduce -g 2 -b 64K -e 64M -f 8 --no-nccl > $p/reduce-2gpu-twoshot.txt 2>&1; echo "reduce 2 gpus twoshot: $?"
timeout 60 dist/peerlink doctor > $p/doctor.txt 2>&1; echo "doctor: $?"; tail -5 $p/doctor.txt
timeout 120 dist/peerlink bench -b 64M -n 5 -w 2 --json $p/bench.json > $p/bench.txt 2>&1; echo "bench: $?"; tail -5 $p/bench.txt
save
