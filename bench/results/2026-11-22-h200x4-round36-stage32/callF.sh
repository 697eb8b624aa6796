# Session 8 call F (wip/relay-ce-split e31310a, not on main): the copy-engine RELAY split across both other
# GPUs — its GPU test, then bench against the SM split and a direct copy-engine hop, 64 MiB - 1 GiB, then
# its chunk size at 256 MiB
p=/tmp/f; mkdir -p $p
for f in dist/xz/*.xz; do xz -dc $f > dist/tests/$(basename $f .xz); chmod +x dist/tests/$(basename $f .xz); done
dist/peerlink --version
save() { tar czf $OUT/f.tar.gz -C /tmp f; }
t() { local name=$1 limit=$2; shift 2; timeout $limit "$@" > $p/$name.txt 2>&1; echo "$name: exit $? $(grep -E '^\[  (PASSED|FAILED) *\]' $p/$name.txt | tr '\n' ' ') $(grep -E '^\[==========\]' $p/$name.txt | tail -1)"; grep -E "^\[  FAILED  \] [A-Z]" $p/$name.txt | head -5; }
t relay-tests 120 dist/tests/gpu_test_gpu_transport --gtest_color=no --gtest_filter='*Relay*'
save
timeout 120 dist/peerlink bench -t d2d_relay_ce_split -t d2d_relay_split -t d2d_write_ce -b 64M -e 1G -f 4 --json $p/relay.json > $p/relay.txt 2>&1; echo "bench: $?"
grep -E "^d2d|SUM|median" $p/relay.txt | head -30
save
for c in 4194304 16777216 33554432; do
  PEERLINK_CHUNK_BYTES=$c timeout 60 dist/peerlink bench -t d2d_relay_ce_split -b 256M --json $p/relay-chunk-$c.json > $p/relay-chunk-$c.txt 2>&1; echo "chunk $c: $?"
  grep -E "SUM|median" $p/relay-chunk-$c.txt | head -3
done
save
