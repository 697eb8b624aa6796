# Session 27 call A: how fast the copy engines push out of a GPU to all of its peers at once, against SM
# stores and a mix of both (peerlink_push_fanout's new ce and mix layouts): 8 MiB to each peer (the 32 MiB
# all-reduce's phase), 16, and 170 (a 512 MiB broadcast root's share per peer). Then the push all-reduce's
# tests at the unified stage allocation (e233edc: CommunicatorPush, every PUSH case, ranks sharing GPUs).
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh a
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for spec in "21 8 0 50" "21 8 0 25" "21 16 0 50" "5 170 0 50"; do
  set -- $spec
  timeout 90 dist/peerlink_push_fanout $spec >$p/fanout-$2-$4.txt 2>&1
  echo "fanout $spec: $?"; cat $p/fanout-$2-$4.txt
  save
done
t comm 300 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorPush.*:*PUSH*:CommunicatorSplitTwoShot.*'
save
t shared 200 dist/tests/gpu_test_communicator_shared --gtest_filter='*AUTO*:*PUSH*'
save
