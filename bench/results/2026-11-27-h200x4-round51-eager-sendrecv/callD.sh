# Session 23 call D: send/recv groups in LL lines (coll_p2p_ll.cu; AUTO while no rank sends more than
# 64 KiB). The tests that run send/recv (bad input, every send/recv correctness case incl. forced LL / LL128 /
# SIMPLE / copy engines, every form on the same pairs back to back, the launch threads, graph replay, the
# deadline with two new LL stalls, ranks sharing GPUs), then LL against the copy form (PEERLINK_PROTO=LL /
# SIMPLE, alternated, 8 B - 256 KiB, peerlink alone) and send/recv 8 B - 64 MiB against NCCL. On H200 also
# the reduce 64 MiB - 1 GiB against NCCL.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh d
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
t errors 120 dist/tests/gpu_test_coll_errors
t sendrecv 300 dist/tests/gpu_test_communicator \
  --gtest_filter='*send_recv*:CommunicatorSendRecv.*:Communicator.LaunchThreadsLeaveWhatTheCallingThreadLeaves:Communicator.RanksMayRunAheadBySeveralCalls'
save
t graph 200 dist/tests/gpu_test_coll_graph \
  --gtest_filter='CommunicatorGraph.EveryCollectiveReplays:CommunicatorGraph.CopyEngineCollectivesReplay:CommunicatorDeadline.StalledRankBecomesTimeoutNamingIt'
t shared 100 dist/tests/gpu_test_communicator_shared --gtest_filter='*send_recv*'
save
for i in 1 2; do
  for proto in LL SIMPLE; do
    PEERLINK_PROTO=$proto timeout 40 dist/peerlink coll -o send_recv -b 8 -e 256K -f 2 -n 100 --no-nccl \
      --json $p/sr-$proto-$i.json >$p/sr-$proto-$i.txt 2>&1
    echo "sr $proto $i: $?"
  done
done
timeout 60 dist/peerlink coll -o send_recv -b 8 -e 64M -f 2 --json $p/coll-send_recv.json >$p/coll-send_recv.txt 2>&1
echo "send_recv 8-64M: $?"
save
grep -A30 "ratio = best" $p/coll-send_recv.txt | grep -E "^ +(8|1024|32768|65536|131072|1048576) " | cut -c1-100
case "$gpu" in *H200*) ;; *) exit 0 ;; esac
timeout 90 dist/peerlink coll -o reduce -b 64M -e 1G -f 2 --json $p/reduce-nccl.json >$p/reduce-nccl.txt 2>&1
echo "reduce 64M-1G: $?"
save
grep -E "^ +(268435456|536870912|1073741824) +[0-9.]+ +[0-9.]+ +[0-9.]+ +nccl" $p/reduce-nccl.txt | cut -c1-100
