# Session 25 call F: a broadcast as a chain of copy-engine copies with stream memory waits (peerlink_ce_chain:
# chunks of 2-32 MiB on 1-8 streams per GPU, 512 MiB), beside the SM ring broadcast in the same call.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
[ -e dist/peerlink_ce_chain ] || { xz -dc dist/extra/peerlink_ce_chain.xz >dist/peerlink_ce_chain && chmod +x dist/peerlink_ce_chain; }
source scripts/device/call-lib.sh f
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
timeout 60 dist/peerlink coll -o broadcast -b 512M -e 512M -n 20 --no-nccl --json $p/bc512-ring-1.json >$p/bc512-ring-1.txt 2>&1
echo "ring 1: $? $(grep -E '^ +536870912' $p/bc512-ring-1.txt | head -2 | cut -c1-110 | tr '\n' ' ')"
timeout 120 dist/peerlink_ce_chain 9 512 >$p/ce-chain-1.txt 2>&1
echo "ce chain 1: $?"; cat $p/ce-chain-1.txt
save
timeout 60 dist/peerlink coll -o broadcast -b 512M -e 512M -n 20 --no-nccl --json $p/bc512-ring-2.json >$p/bc512-ring-2.txt 2>&1
echo "ring 2: $? $(grep -E '^ +536870912' $p/bc512-ring-2.txt | head -2 | cut -c1-110 | tr '\n' ' ')"
timeout 120 dist/peerlink_ce_chain 9 1024 >$p/ce-chain-1g.txt 2>&1
echo "ce chain 1 GiB: $?"; cat $p/ce-chain-1g.txt
save
