# Session 26 call D: two variants of the two-phase push, built from branch exp/push-variants (commit fb54f12)
# against main's (call C's build, 821051a): NO_START skips the start barrier and alternates each stage slot's
# halves by the call's parity (valid only for back-to-back push calls, shards <= 8 MiB: an experiment of what
# the start costs), UNROLL4 keeps 4 packs per thread in flight instead of 2. All-reduce 8-32 MiB, alternated
# three times, every result checked (#wrong).
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
for v in NO_START UNROLL4; do
  [ -e dist/peerlink-$v ] || { xz -dc dist/extra/peerlink-$v.xz >dist/peerlink-$v && chmod +x dist/peerlink-$v; }
done
source scripts/device/call-lib.sh d
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for i in 1 2 3; do
  for v in main NO_START UNROLL4; do
    bin=dist/peerlink-$v
    [ $v = main ] && bin=dist/peerlink
    timeout 60 $bin coll -o all_reduce -b 8M -e 32M -f 2 -n 100 --no-nccl --json $p/ar-$v-$i.json >$p/ar-$v-$i.txt 2>&1
    echo "$v $i: $? $(awk '/peerlink_graph/{f=1} f && /^ +[0-9]+ /{printf "%s:%s/%s#%s ", $1, $6, $10, $9+$13}' $p/ar-$v-$i.txt)"
  done
  save
done
