# Session 27 call D (4x H200, after call C on the same machine): broadcast, reduce and send/recv against NCCL
# from 8 B to 1 GiB by factors of 2 (call C has the other collectives), then a communicator's creation first
# in three fresh processes; build 6b2434d.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh d
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for c in broadcast reduce send_recv; do
  s=$(date +%s)
  timeout 140 dist/peerlink coll -o $c -b 8 -e 1G -f 2 --json $p/coll-$c.json >$p/coll-$c.txt 2>&1
  echo "$c 8-1G: exit $? in $(( $(date +%s) - s )) s"
  save
done
for i in 1 2 3; do
  PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL timeout 60 dist/tests/gpu_test_communicator --gtest_filter='Communicator.CreatesOnEveryGpuAndReportsCreationTime' >$p/create-$i.txt 2>&1
  echo "create $i: $(grep -o 'created in [0-9.]* ms ([a-z ]*' $p/create-$i.txt | tr '\n' ' ') $(grep -o 'context [0-9.]* ms' $p/create-$i.txt | tr '\n' ' ')"
done
save
