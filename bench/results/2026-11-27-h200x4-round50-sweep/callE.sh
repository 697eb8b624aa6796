# Session 22 call E: send/recv on the copy engines (commit after round 50's sweeps). The tests: every
# send/recv correctness case with PEERLINK_COLL_CE=1 and AUTO, the mixed small/large groups test, the 64
# Mi-element send/recv (256 MiB: the copy engines under AUTO), 3-8 ranks sharing GPUs on the copy engines, the
# graph replay and the deadline test (a new send/recv stall). Then send/recv 1 MiB - 1 GiB: AUTO against NCCL,
# and forced copy engines / SM kernels (peerlink alone) for the threshold.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh e
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t sendrecv 200 dist/tests/gpu_test_communicator \
  --gtest_filter='CommunicatorSendRecv.*:*CE_send_recv:*AUTO_send_recv:*SixtyFourMillionElements/send_recv'
save
t shared-ce 200 dist/tests/gpu_test_communicator_shared --gtest_filter='CopyEngines/*'
save
t graph-ce 120 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorGraph.CopyEngineCollectivesReplay'
t deadline 120 dist/tests/gpu_test_coll_graph --gtest_filter='CommunicatorDeadline.StalledRankBecomesTimeoutNamingIt'
save
timeout 60 dist/peerlink coll -o send_recv -b 1M -e 1G -f 2 --json $p/sr-auto.json >$p/sr-auto.txt 2>&1; echo "auto: $?"
save
for ce in 1 0; do
  PEERLINK_COLL_CE=$ce timeout 40 dist/peerlink coll -o send_recv -b 1M -e 1G -f 2 --no-nccl --json $p/sr-ce$ce.json \
    >$p/sr-ce$ce.txt 2>&1
  echo "ce=$ce: $?"
  save
done
