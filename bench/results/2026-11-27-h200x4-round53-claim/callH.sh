# Session 25 call H: the direct-read reduction kernel's shape at 4-64 MiB (all-reduce, graph, every result
# checked): four builds of the final code differing only in kReduceThreads x kUnroll (coll_reduce.cu) -
# 512 x 2 (the default), 256 x 4, 512 x 1, 1024 x 1 - alternated twice.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh h
for v in t512u2 t256u4 t512u1 t1024u1; do xz -dc dist/extra/peerlink-$v.xz >dist/peerlink-$v && chmod +x dist/peerlink-$v; done
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for i in 1 2; do
  for v in t512u2 t256u4 t512u1 t1024u1; do
    timeout 60 dist/peerlink-$v coll -o all_reduce -b 4M -e 64M -f 2 -n 50 --no-nccl --json $p/ar-$v-$i.json >$p/ar-$v-$i.txt 2>&1
    echo "$v $i: $? $(awk '/peerlink_graph/{f=1} f && /^ +[0-9]+ /{printf "%s:%s/%s ", $1, $6, $10}' $p/ar-$v-$i.txt)"
  done
  save
done
