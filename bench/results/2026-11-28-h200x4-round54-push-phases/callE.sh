# Session 26 call E: peerlink_push_fanout (new development tool): every GPU pushing to all of its peers at
# once with SM stores, laid out four ways (every pack to every peer in turn, as the push all-reduce and the
# all-gather kernel do; a peer per block; 64 KiB chunks to consecutive peers; a peer per warp), 16 and 64 MiB
# to each peer, on every SM and on 66.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh e
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for mib in 16 64; do
  for blocks in 0 66; do
    timeout 60 dist/peerlink_push_fanout 11 $mib $blocks >$p/fanout-$mib-$blocks.txt 2>&1
    echo "$mib MiB, blocks $blocks: $?"; cat $p/fanout-$mib-$blocks.txt
  done
  save
done
