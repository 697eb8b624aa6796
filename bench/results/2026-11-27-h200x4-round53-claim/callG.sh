# Session 25 call G: the push two-shot (PEERLINK_COLL_PUSH=1: every byte crosses NVLink as a store, into the
# owners' stages and then as results into every output) against the direct-read two-shot at 4-64 MiB, as
# round 24 left it (1.01-1.31x the direct reads' time then); alternated twice, then the push on 64 and 32 blocks.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh g
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for i in 1 2; do
  for push in 0 1; do
    PEERLINK_COLL_PUSH=$push timeout 60 dist/peerlink coll -o all_reduce -b 4M -e 64M -f 2 -n 50 --no-nccl --json $p/ar-push$push-$i.json >$p/ar-push$push-$i.txt 2>&1
    echo "push=$push $i: $? $(awk '/peerlink_graph/{f=1} f && /^ +[0-9]+ /{printf "%s:%s ", $1, $6}' $p/ar-push$push-$i.txt)"
  done
done
save
for blocks in 64 32; do
  PEERLINK_COLL_PUSH=1 PEERLINK_COLL_MAX_BLOCKS=$blocks timeout 60 dist/peerlink coll -o all_reduce -b 4M -e 64M -f 2 -n 50 --no-nccl --json $p/ar-push1-b$blocks.json >$p/ar-push1-b$blocks.txt 2>&1
  echo "push=1 blocks=$blocks: $? $(awk '/peerlink_graph/{f=1} f && /^ +[0-9]+ /{printf "%s:%s ", $1, $6}' $p/ar-push1-b$blocks.txt)"
done
save
