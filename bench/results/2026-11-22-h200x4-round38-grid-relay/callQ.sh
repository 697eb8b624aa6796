# Session 9 call Q (main): which protocol NCCL runs at the sizes where its rings lead (NCCL's TUNING log),
# and NCCL held to its Simple protocol (NCCL_PROTO=Simple) against its defaults, each beside peerlink
source scripts/device/call-lib.sh q
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING timeout 120 dist/peerlink coll -o reduce -b 32M -e 256M -f 2 -c 0 > $p/tuning-reduce.txt 2>&1; echo "tuning: $?"
grep -E "Bytes -> Algo|algorithm|proto" $p/tuning-reduce.txt | sort | uniq -c | sort -rn | head -20
save
for c in reduce broadcast all_reduce; do
  for proto in default Simple; do
    if [ $proto = Simple ]; then export NCCL_PROTO=Simple; else unset NCCL_PROTO; fi
    timeout 150 dist/peerlink coll -o $c -b 8M -e 512M -f 4 --json $p/$c-nccl-$proto.json > $p/$c-nccl-$proto.txt 2>&1; echo "$c NCCL $proto: $?"
  done
  unset NCCL_PROTO
  python3 scripts/coll_compare.py $p/$c-nccl-default.json
  python3 scripts/coll_compare.py $p/$c-nccl-Simple.json
  save
done
