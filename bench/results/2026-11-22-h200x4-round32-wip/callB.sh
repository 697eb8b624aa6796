# Session 7 call B: ring chunk sizing (experiment binary: PEERLINK_EXP_RING_ROUNDS rounds per block aimed at,
# PEERLINK_EXP_RING_MIN_KIB the smallest chunk; 8 and 16 are today's) for RING broadcast, reduce, all-reduce.
export NCCL_NVLS_ENABLE=0
p=/tmp/b; mkdir -p $p
save() { tar czf $OUT/b.tar.gz -C /tmp b; }
xz -dc dist/wip/peerlink-exp.xz > dist/wip/peerlink-exp; chmod +x dist/wip/peerlink-exp
b=dist/wip/peerlink-exp; $b --version
c() { local name=$1; shift; timeout 50 $b coll --no-nccl --json $p/$name.json "$@" > $p/$name.txt 2>&1; echo "$name: $?"; }
for o in broadcast reduce all_reduce; do
  lo=8M; [ $o = all_reduce ] && lo=32M
  for v in 8-16 16-8 32-4 16-4; do
    PEERLINK_ALGO=RING PEERLINK_EXP_RING_ROUNDS=${v%-*} PEERLINK_EXP_RING_MIN_KIB=${v#*-} c $o-$v -o $o -b $lo -e 512M -f 2
  done
  python3 scripts/coll_compare.py $p/$o-8-16.json $p/$o-16-8.json $p/$o-32-4.json $p/$o-16-4.json 2>&1 | grep -E "^\|"
  save
done
