#!/bin/bash
scripts/device/unpack-dist.sh >/dev/null
export NCCL_NVLS_ENABLE=0 PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL
T=$PWD/dist/nccl-tests; O=$PWD/dist/nccl_api
for packed in $T/*.xz; do [ -e "${packed%.xz}" ] || { xz -dc "$packed" >"${packed%.xz}" && chmod +x "${packed%.xz}"; }; done
mkdir -p $OUT/check
nt() { name=$1; shift; LD_LIBRARY_PATH="$O:$T" timeout 150 mpirun --allow-run-as-root -np 2 --bind-to none --mca pml ob1 --mca btl self,vader,tcp -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x PEERLINK_DEBUG -x PEERLINK_DEBUG_SUBSYS $T/${name}_perf -g 1 "$@" > $OUT/check/$name.txt 2>&1; echo "$name exit $? wrong-rows: $(awk '$1 ~ /^[0-9]+$/ {for(i=1;i<=NF;i++) if ($i ~ /^[0-9]+$/ && i>=9) {}; print}' $OUT/check/$name.txt | awk '{ if ($9+0>0 || $13+0>0) c++ } END {print c+0}') $(grep -c '^ *[0-9]' $OUT/check/$name.txt) rows; $(grep 'Out of bounds' $OUT/check/$name.txt)"; }
nt all_reduce -b 8M -e 128M -f 4 -d all -o all -c 1 -n 2 -w 1 -R 0
nt reduce -b 8M -e 128M -f 4 -d all -o all -c 1 -n 2 -w 1 -R 0
nt broadcast -b 128M -e 256M -f 2 -d all -c 1 -n 2 -w 1 -R 0
nt reduce_scatter -b 512M -e 512M -d float,bfloat16,int64 -o sum,max -c 1 -n 2 -w 1 -R 0
grep -h "COLL.*arena ring" $OUT/check/*.txt | head -3
