# Session 20 call H: the stream checks asking the driver (cuStreamIsCapturing, cuStreamGetCtx against the
# rank's primary context) and an in-place all-reduce's buffer checked once, against the build before them
# (619edb2, dist/extra/old-*), alternated: peerlink_host_cost, eager all-reduce 8 B - 64 KiB, the other
# collectives 8 B - 1 MiB; then the bad-input tests, the AUTO correctness tests and Communicator.*, the
# graph and deadline tests but the copy-engine graph test.
# The CLI travels compressed (the carry limit): unpacked before call-lib.sh runs it.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh h
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for x in peerlink_host_cost old-peerlink_host_cost old-peerlink; do xz -dc dist/extra/$x.xz >dist/$x && chmod +x dist/$x; done
dist/old-peerlink --version
for i in 1 2; do
  for b in new old; do
    tool=dist/peerlink_host_cost; [ $b = old ] && tool=dist/old-peerlink_host_cost
    timeout 60 $tool 20000 >$p/host-cost-$b-$i.txt 2>&1
    echo "host cost $b $i: $? $(grep 'calls, each\|launches the set' $p/host-cost-$b-$i.txt | tr -s ' ' | tr '\n' ';')"
  done
done
save
for i in 1 2 3; do
  for b in new old; do
    cli=dist/peerlink; [ $b = old ] && cli=dist/old-peerlink
    timeout 60 $cli coll -o all_reduce -b 8 -e 64K -f 2 -n 200 --no-nccl --json $p/ar-$b-$i.json >$p/ar-$b-$i.txt 2>&1; echo "all_reduce $b $i: $?"
  done
done
save
for i in 1 2; do
  for c in all_gather reduce_scatter all_to_all broadcast reduce; do
    for b in new old; do
      cli=dist/peerlink; [ $b = old ] && cli=dist/old-peerlink
      timeout 40 $cli coll -o $c -b 8 -e 1M -f 8 -n 100 --no-nccl --json $p/$c-$b-$i.json >$p/$c-$b-$i.txt 2>&1; echo "$c $b $i: $?"
    done
  done
done
save
t errors 40 dist/tests/gpu_test_coll_errors
save
t comm 120 dist/tests/gpu_test_communicator --gtest_filter='*/CommunicatorCorrectness.*/AUTO_*:Communicator.*'
save
t graph 80 dist/tests/gpu_test_coll_graph --gtest_filter='-CommunicatorGraph.CopyEngineCollectivesReplay'
save
