# Session 20 call G: where a call's host time goes, stage by stage. dist/extra/probe-peerlink_host_cost.xz
# is peerlink_host_cost built from 619edb2 with a throwaway probe (not committed: rdtsc at each stage of
# Communicator::allReduce's path, sums printed at exit with the tick rate; `probe.diff` is the patch).
# The CLI travels compressed (the carry limit): unpacked before call-lib.sh runs it.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh g
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
grep -m1 "model name" /proc/cpuinfo
xz -dc dist/extra/probe-peerlink_host_cost.xz >dist/probe && chmod +x dist/probe
for i in 1 2 3; do
  timeout 60 dist/probe 20000 >$p/probe-$i.txt 2>&1; echo "probe $i: $?"
  grep -E "probe|calls, each|launches the set" $p/probe-$i.txt
done
save
