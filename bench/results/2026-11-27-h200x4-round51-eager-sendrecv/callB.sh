# Session 23 call B (the warm machine of call A): the large reduce against NCCL in the same run (the 128 KiB
# rounds from 256 MiB, round 50), the all-reduce's 512 MiB spread split into its halves' counterparts
# (ring reduce-scatter, copy-engine all-gather, 512 MiB each) in three fresh processes each, and the ring
# broadcast's chunk and grid at 256 MiB - 1 GiB (peerlink alone, forced ring).
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh b
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
timeout 90 dist/peerlink coll -o reduce -b 64M -e 1G -f 2 --json $p/reduce-nccl.json >$p/reduce-nccl.txt 2>&1
echo "reduce 64M-1G: $?"
save
for i in 1 2 3; do
  for op in all_reduce reduce_scatter all_gather; do
    timeout 40 dist/peerlink coll -o $op -b 512M -e 512M -n 20 -w 5 --no-nccl --json $p/$op-512m-$i.json \
      >$p/$op-512m-$i.txt 2>&1
    echo "$op 512M run $i: $?"
  done
done
save
bc() {  # bc NAME ENV...
  local name=$1
  shift
  env PEERLINK_ALGO=RING "$@" timeout 40 dist/peerlink coll -o broadcast -b 256M -e 1G -f 2 -n 10 -w 3 -c 0 --no-nccl \
    --json $p/$name.json >$p/$name.txt 2>&1
  echo "$name: $?"
}
bc bc-default
bc bc-c16k PEERLINK_COLL_RING_CHUNK=16384
bc bc-c64k PEERLINK_COLL_RING_CHUNK=65536
bc bc-b96 PEERLINK_COLL_MAX_BLOCKS=96
bc bc-b64 PEERLINK_COLL_MAX_BLOCKS=64
bc bc-default-2
save
grep -E "^ +(268435456|536870912|1073741824) " $p/reduce-nccl.txt
