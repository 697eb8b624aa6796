# Session 8 call J (peerlink_relay_timeline at the commit after 8e1ad98, see README): the split relay's
# kernels on fewer SMs, and one relay's kernel by SMs, at 64 and 256 MiB
source scripts/device/call-lib.sh j
timeout 200 dist/peerlink_relay_timeline 0 1 2 3 > $p/timeline-sms-0-1.txt 2>&1; echo "0->1: $?"; grep -A12 "by shape\|by SMs" $p/timeline-sms-0-1.txt | grep -v "^--"
save
