# Session 19 call E: call D's 20-iteration tables had three eager cells 10-40x their neighbours (all-gather
# 2 MiB, all-reduce 512 KiB in place, broadcast 8 MiB in place; never seen in earlier rounds' tables) -- a
# launch thread descheduled while the caller waited for it? Alternated three times: the call-D binary
# (dist/peerlink-old, c057705), this build (the caller takes back a job its thread has not started within
# 20 us; COLL log line with the threads' counters at the end) and this build without launch threads, each
# all-gather, all-reduce and broadcast 8 B - 32 MiB against NCCL as in call D. Then the launch-thread tests.
source scripts/device/call-lib.sh e
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
xz -dc dist/extra/peerlink-old.xz >dist/peerlink-old && chmod +x dist/peerlink-old
for round in 1 2 3; do
  for setting in old new off; do
    bin=peerlink; threads=1000
    [ $setting = old ] && bin=peerlink-old
    [ $setting = off ] && threads=0
    for c in all_gather all_reduce broadcast; do
      PEERLINK_COLL_LAUNCH_THREADS=$threads PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL timeout 60 dist/$bin coll -o $c -b 8 -e 32M -f 4 --json $p/$c-$setting-$round.json >$p/$c-$setting-$round.txt 2>&1
      echo "$c $setting $round: $? $(grep -o 'launch threads: .*' $p/$c-$setting-$round.txt)"
    done
  done
  save
done
t threads 60 dist/tests/gpu_test_communicator --gtest_filter='Communicator.LaunchThreads*:Communicator.EagerCalls*:Communicator.RanksMayRunAhead*'
save
