# Session 8 call C (experiment build a256f13: main 8e0b47d with the rings' rounds per block, chunk limits,
# broadcast grid cap, ring stage and ring reduce cap read from PEERLINK_X_*; experiment2.diff), each ring
# forced, -c 0: which chunk and grid shapes move the ring broadcast, reduce, all-reduce and reduce-scatter
p=/tmp/c; mkdir -p $p
dist/peerlink --version
save() { tar czf $OUT/c.tar.gz -C /tmp c; }
i=0
x() { local o=$1 b=$2 label=$3; shift 3; i=$((i+1)); env "$@" PEERLINK_ALGO=RING timeout 60 dist/peerlink coll -o $o -b $b -e 1G -f 2 --no-nccl -c 0 --json $p/$o-$i-$label.json > $p/$o-$i-$label.txt 2>&1; echo "$o $i $label: $?"; }
x broadcast 32M default A=1
x broadcast 32M chunk128 PEERLINK_X_MAXCHUNK_KIB=128
x broadcast 32M cap64 PEERLINK_X_BCAST_CAP=64
x broadcast 32M cap96 PEERLINK_X_BCAST_CAP=96
x broadcast 32M rounds32 PEERLINK_X_ROUNDS=32
x broadcast 32M rounds8 PEERLINK_X_ROUNDS=8
x broadcast 32M default A=1
python3 scripts/coll_graph_times.py $p/broadcast-*.json
save
x reduce 16M default A=1
x reduce 16M stage64-chunk128 PEERLINK_X_STAGE_MIB=64 PEERLINK_X_MAXCHUNK_KIB=128
x reduce 16M rounds32 PEERLINK_X_ROUNDS=32
x reduce 16M cap64-rounds32 PEERLINK_X_REDUCE_CAP=64 PEERLINK_X_ROUNDS=32
x reduce 16M default A=1
python3 scripts/coll_graph_times.py $p/reduce-*.json
save
x all_reduce 128M default A=1
x all_reduce 128M stage64-chunk128 PEERLINK_X_STAGE_MIB=64 PEERLINK_X_MAXCHUNK_KIB=128
x all_reduce 128M default A=1
python3 scripts/coll_graph_times.py $p/all_reduce-*.json
x reduce_scatter 128M default A=1
x reduce_scatter 128M stage64-chunk128 PEERLINK_X_STAGE_MIB=64 PEERLINK_X_MAXCHUNK_KIB=128
x reduce_scatter 128M default A=1
python3 scripts/coll_graph_times.py $p/reduce_scatter-*.json
save
