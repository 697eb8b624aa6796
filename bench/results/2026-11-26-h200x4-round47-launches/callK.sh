# Session 19 call K: does one cudaMemcpyBatchAsync of a GPU's pushes to its three peers cost less than three
# cudaMemcpyAsync one after another (the copy-engine collectives' ~8 us per copy, round 42)? peerlink_ce_batch,
# every GPU pushing at once, 1 - 128 MiB per copy, twice.
source scripts/device/call-lib.sh k
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
xz -dc dist/extra/peerlink_ce_batch.xz >dist/peerlink_ce_batch && chmod +x dist/peerlink_ce_batch
for i in 1 2; do timeout 60 dist/peerlink_ce_batch 11 >$p/ce-batch-$i.txt 2>&1; echo "ce batch $i: $?"; cat $p/ce-batch-$i.txt; done
save
