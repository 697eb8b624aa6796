# Session 23 call A: eager send/recv through the launch threads and each rank's KernelGraph (commit named by
# `peerlink --version`). The tests that touch send/recv's launches (bad input incl. a half-captured set and
# group, the send/recv correctness cases, the launch-threads comparison, graph replay, the deadline), then
# send/recv 8 B - 1 GiB against NCCL, and peerlink_engine_mix: whether SM stores and copy-engine pushes at
# once carry more per NVLink port than the SM kernel alone.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh a
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
timeout 60 dist/peerlink_engine_mix 11 256 >$p/engine-mix-256m.txt 2>&1; echo "engine mix 256M: $?"
timeout 60 dist/peerlink_engine_mix 11 64 >$p/engine-mix-64m.txt 2>&1; echo "engine mix 64M: $?"
save
t errors 120 dist/tests/gpu_test_coll_errors
save
timeout 90 dist/peerlink coll -o send_recv -b 8 -e 1G -f 2 --json $p/coll-send_recv.json >$p/coll-send_recv.txt 2>&1
echo "send_recv 8-1G: $?"
save
t sendrecv 200 dist/tests/gpu_test_communicator \
  --gtest_filter='CommunicatorSendRecv.*:*CE_send_recv:*AUTO_send_recv:*SixtyFourMillionElements/send_recv:Communicator.LaunchThreadsLeaveWhatTheCallingThreadLeaves:Communicator.RanksMayRunAheadBySeveralCalls'
save
t graph 150 dist/tests/gpu_test_coll_graph \
  --gtest_filter='CommunicatorGraph.EveryCollectiveReplays:CommunicatorGraph.CopyEngineCollectivesReplay:CommunicatorDeadline.StalledRankBecomesTimeoutNamingIt'
save
t shared 100 dist/tests/gpu_test_communicator_shared --gtest_filter='*send_recv*'
save
tail -4 $p/engine-mix-256m.txt
grep -E "^ +(8|1024|65536|1048576|67108864|1073741824) " $p/coll-send_recv.txt | head -8
