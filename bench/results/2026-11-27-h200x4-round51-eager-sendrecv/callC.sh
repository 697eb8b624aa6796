# Session 23 call C: eager send/recv, the new path (launch threads, each rank's KernelGraph) against the old
# one (PEERLINK_COLL_LAUNCH_THREADS=0 PEERLINK_COLL_EAGER_GRAPH=0: direct launches from the calling thread,
# one rank after another), alternated in fresh processes, 8 B - 1 MiB, 100 iterations, peerlink alone. Then
# the 512 MiB spread: call B found the ring reduce-scatter's cells spread (327.5-360.6 GB/s) where the
# copy-engine all-gather's did not (375.8-380.7); reduce-scatter and all-reduce at 512 MiB, three fresh
# processes per setting: default, no programmatic dependent launch, every rank waiting for every rank at a
# ring's start, 64 KiB and 16 KiB chunks. On H200 also the reduce 64 MiB - 1 GiB against NCCL.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh c
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
for i in 1 2 3; do
  timeout 40 dist/peerlink coll -o send_recv -b 8 -e 1M -f 4 -n 100 --no-nccl --json $p/sr-new-$i.json \
    >$p/sr-new-$i.txt 2>&1
  echo "sr new $i: $?"
  PEERLINK_COLL_LAUNCH_THREADS=0 PEERLINK_COLL_EAGER_GRAPH=0 timeout 40 dist/peerlink coll -o send_recv -b 8 -e 1M \
    -f 4 -n 100 --no-nccl --json $p/sr-old-$i.json >$p/sr-old-$i.txt 2>&1
  echo "sr old $i: $?"
done
save
spread() {  # spread NAME ENV...
  local name=$1
  shift
  for i in 1 2 3; do
    for op in reduce_scatter all_reduce; do
      env "$@" timeout 40 dist/peerlink coll -o $op -b 512M -e 512M -n 20 -w 5 --no-nccl --json $p/$name-$op-$i.json \
        >$p/$name-$op-$i.txt 2>&1 || echo "$name $op $i: failed"
    done
  done
  echo "$name: $(grep -hE '^ +536870912 ' $p/$name-reduce_scatter-?.txt | awk '{printf "%s/%s ", $8, $12}')"
}
spread default SPREAD_SETTING=default
spread pdl0 PEERLINK_COLL_PDL=0
spread ns0 PEERLINK_COLL_RING_NEIGHBOR_START=0
spread c64k PEERLINK_COLL_RING_CHUNK=65536
spread c16k PEERLINK_COLL_RING_CHUNK=16384
save
case "$gpu" in *H200*) ;; *) exit 0 ;; esac
timeout 90 dist/peerlink coll -o reduce -b 64M -e 1G -f 2 --json $p/reduce-nccl.json >$p/reduce-nccl.txt 2>&1
echo "reduce 64M-1G: $?"
save
grep -E "^ +(268435456|536870912|1073741824) +[0-9.]+ +[0-9.]+ +[0-9.]+ +nccl" $p/reduce-nccl.txt
