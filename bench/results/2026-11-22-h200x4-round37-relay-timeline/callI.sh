# Session 8 call I (peerlink_relay_timeline at 8e1ad98): the split RELAY GPU 0 -> 1 through 2 and 3 again,
# with its kernels' launch shapes swept at 64 and 256 MiB
source scripts/device/call-lib.sh i
timeout 200 dist/peerlink_relay_timeline 0 1 2 3 > $p/timeline-shapes-0-1.txt 2>&1; echo "0->1: $?"; grep -A17 "by shape" $p/timeline-shapes-0-1.txt
save
