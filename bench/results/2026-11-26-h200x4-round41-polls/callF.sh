# Session 13 call F on nvidia-h200-x4 (whichever 4-GPU machine comes), the binary of calls C-E (99c316c):
# do the crossovers past 4 MiB still hold with round 39-41's cheaper launches? Forced algorithms against
# AUTO in one run, peerlink alone, 20-iteration graphs, every result checked: all-reduce 4-128 MiB (AUTO,
# PEERLINK_COLL_PUSH=1, PEERLINK_ALGO=RING), reduce and broadcast 8-512 MiB (AUTO, TWOSHOT, RING).
source scripts/device/call-lib.sh f
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
run() {  # NAME COLLECTIVE MIN MAX ENV...
  local name=$1 c=$2 lo=$3 hi=$4
  shift 4
  env "$@" timeout 100 dist/peerlink coll --no-nccl -o $c -b $lo -e $hi -f 2 --json $p/$name.json >$p/$name.txt 2>&1 || echo "$name failed"
}
for round in 1 2; do
  run ar-auto-r$round all_reduce 4M 128M PEERLINK_ALGO=AUTO
  run ar-push-r$round all_reduce 4M 128M PEERLINK_COLL_PUSH=1
  run ar-ring-r$round all_reduce 4M 128M PEERLINK_ALGO=RING
done
python3 scripts/coll_graph_times.py $p/ar-*.json | tee $p/times-ar.txt
save
for c in reduce broadcast; do
  for algo in AUTO TWOSHOT RING; do
    run $c-$algo $c 8M 512M PEERLINK_ALGO=$algo
  done
  python3 scripts/coll_graph_times.py $p/$c-*.json | tee $p/times-$c.txt
  save
done
