# Session 8 call B (experiment build 13f3b4c: wip caae4a7 with the ring stage and the ring reduce's grid cap
# read from PEERLINK_X_STAGE_MIB / PEERLINK_X_REDUCE_CAP, defaults 32 / 128; experiment.diff): 128 blocks
# against 132, then each ring forced against AUTO around the crossovers, then the step-aside log line
p=/tmp/b; mkdir -p $p
xz -dc dist/xz/gpu_test_communicator.xz > dist/tests/gpu_test_communicator; chmod +x dist/tests/gpu_test_communicator
dist/peerlink --version
save() { tar czf $OUT/b.tar.gz -C /tmp b; }
for o in reduce reduce_scatter; do
  i=0; for cfg in 32:128 48:132 32:128; do
    s=${cfg%:*}; c=${cfg#*:}; i=$((i+1))
    PEERLINK_X_STAGE_MIB=$s PEERLINK_X_REDUCE_CAP=$c PEERLINK_ALGO=RING timeout 40 dist/peerlink coll -o $o -b 256M -e 1G -f 2 --no-nccl -c 0 --json $p/sweep-$o-$i-$s-$c.json > $p/sweep-$o-$i-$s-$c.txt 2>&1; echo "$o $cfg: $?"
  done
  python3 scripts/coll_graph_times.py $p/sweep-$o-*.json
done
save
run() { local o=$1 b=$2 e=$3 a=$4; PEERLINK_ALGO=$a timeout 40 dist/peerlink coll -o $o -b $b -e $e -f 2 --no-nccl -c 0 --json $p/x-$o-$a.json > $p/x-$o-$a.txt 2>&1; echo "$o $a: $?"; }
run reduce 8M 256M AUTO; run reduce 8M 256M RING
python3 scripts/coll_compare.py $p/x-reduce-AUTO.json $p/x-reduce-RING.json 2>&1 | grep -E "^\|"
run all_reduce 32M 512M AUTO; run all_reduce 32M 512M RING
python3 scripts/coll_compare.py $p/x-all_reduce-AUTO.json $p/x-all_reduce-RING.json 2>&1 | grep -E "^\|"
run reduce_scatter 32M 512M AUTO; run reduce_scatter 32M 512M RING
python3 scripts/coll_compare.py $p/x-reduce_scatter-AUTO.json $p/x-reduce_scatter-RING.json 2>&1 | grep -E "^\|"
run broadcast 32M 512M AUTO; run broadcast 32M 512M RING
python3 scripts/coll_compare.py $p/x-broadcast-AUTO.json $p/x-broadcast-RING.json 2>&1 | grep -E "^\|"
save
PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL timeout 60 dist/tests/gpu_test_communicator --gtest_color=no --gtest_filter='*RING_reduce_scatter' > $p/stepaside.txt 2>&1; echo "stepaside: $? $(grep -E '^\[  (PASSED|FAILED) *\]' $p/stepaside.txt)"
grep -i "steps aside" $p/stepaside.txt | sort | uniq -c | head -5
save
