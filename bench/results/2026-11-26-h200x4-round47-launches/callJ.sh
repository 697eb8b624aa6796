# Session 19 call J: the review's last commit (the release log line, LaunchThreads::run's template) -- the
# launch-thread tests, Communicator.* and the deadline tests, with the COLL log of one eager run.
source scripts/device/call-lib.sh j
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t comm 90 dist/tests/gpu_test_communicator --gtest_filter='Communicator.*:CommunicatorRing.*'
t deadline 40 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorDeadline.*'
save
PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL timeout 60 dist/peerlink coll -o all_reduce -b 8 -e 64K -f 4 -n 200 --no-nccl >$p/ar.txt 2>&1; echo "all_reduce: $? $(grep -o 'launch threads: .*' $p/ar.txt)"
save
