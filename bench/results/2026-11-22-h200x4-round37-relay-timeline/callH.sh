# Session 8 call H (main, peerlink_relay_timeline at the commit it prints... see README): where the split
# RELAY's time goes, GPU 0 -> 1 through 2 and 3, and GPU 2 -> 3 through 0 and 1
source scripts/device/call-lib.sh h
timeout 100 dist/peerlink_relay_timeline 0 1 2 3 > $p/timeline-0-1.txt 2>&1; echo "0->1: $?"; cat $p/timeline-0-1.txt
save
timeout 100 dist/peerlink_relay_timeline 2 3 0 1 > $p/timeline-2-3.txt 2>&1; echo "2->3: $?"; cat $p/timeline-2-3.txt
save
