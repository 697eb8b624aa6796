# Session 27 call I: the final code (the push's parts from slotPartOf, a pushed call's reason without the split
# kernels' clause): the two-shot executable (CommunicatorPush's parts, the split two-shot, the two-shot
# reduce), every PUSH case of the communicator executable, the PUSH cases of ranks sharing GPUs, and the
# reason `peerlink coll --explain` gives for a 64 MiB all-reduce under AUTO and PEERLINK_COLL_PUSH=1.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh i
nvidia-smi --query-gpu=name --format=csv,noheader
t two_shot 300 dist/tests/gpu_test_communicator_two_shot
grep -E "^16 MiB|^96 MiB" $p/two_shot.txt
t comm 300 dist/tests/gpu_test_communicator --gtest_filter='*PUSH*'
t shared 200 dist/tests/gpu_test_communicator_shared --gtest_filter='*PUSH*'
save
for push in AUTO 1; do
  PEERLINK_COLL_PUSH=$push timeout 60 dist/peerlink coll -o all_reduce -b 16M -e 128M --explain >$p/explain-$push.txt 2>&1
  echo "explain PUSH=$push: $?"; grep -E "^ +[0-9]+ " $p/explain-$push.txt | cut -c1-400
done
save
