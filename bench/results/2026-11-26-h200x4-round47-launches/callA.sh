# Session 19 call A: 617ddd9 (collRingStageReleased in coll_kernels.cuh, stageCredit's one load) on a GPU for
# the first time -- back-to-back and the deadline test -- and peerlink_host_cost's new rows: raw graph
# launches on every GPU from one thread in turn against one thread per GPU (does the driver run launches to
# different GPUs side by side?).
source scripts/device/call-lib.sh a
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
xz -dc dist/extra/peerlink_host_cost.xz >dist/peerlink_host_cost && chmod +x dist/peerlink_host_cost
t back-to-back 60 dist/tests/gpu_test_communicator --gtest_filter='CommunicatorRing.*'
t deadline 40 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorDeadline.*'
grep -E "^(RING|ONESHOT|TWOSHOT)" $p/deadline.txt | cut -c1-300
save
for i in 1 2; do timeout 60 dist/peerlink_host_cost 20000 >$p/host-cost-$i.txt 2>&1; echo "host cost $i: $?"; cat $p/host-cost-$i.txt; done
save
