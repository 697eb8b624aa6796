# Session 19 call H: call E's counters showed 2-3% of the launches taken back, and call G one eager cell at
# 82 us: a thread woken from its sleep was marked awake before it ran again, so the set after a wake-up
# posted to it and waited 20 us per such thread. Now a woken thread takes jobs only once it runs, and the
# posted jobs share one deadline. Alternated twice: this build, call G's (dist/peerlink-old, 1b9ae49) and
# this build without threads, eager all-reduce 8 B - 64 KiB (200 iterations) with NCCL in the run and without,
# the COLL log's counters at the end of each.
source scripts/device/call-lib.sh h
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
xz -dc dist/extra/peerlink-old.xz >dist/peerlink-old && chmod +x dist/peerlink-old
for i in 1 2; do
  for setting in new old off; do
    bin=peerlink; threads=1000
    [ $setting = old ] && bin=peerlink-old
    [ $setting = off ] && threads=0
    for kind in nccl solo; do
      flag=""; [ $kind = solo ] && flag=--no-nccl
      PEERLINK_COLL_LAUNCH_THREADS=$threads PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL timeout 90 dist/$bin coll -o all_reduce -b 8 -e 64K -f 2 -n 200 $flag --json $p/ar-$kind-$setting-$i.json >$p/ar-$kind-$setting-$i.txt 2>&1
      echo "$kind $setting $i: $? $(grep -o 'launch threads: .*' $p/ar-$kind-$setting-$i.txt)"
    done
  done
  save
done
t threads 60 dist/tests/gpu_test_communicator --gtest_filter='Communicator.LaunchThreads*:Communicator.EagerCalls*:Communicator.RanksMayRunAhead*:CommunicatorRing.*'
save
