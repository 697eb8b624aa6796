# Session 8 call G (wip/relay-ce-split e31310a's binary; its SM relay path is main's): where the SM relay's
# fixed cost comes from — one relay GPU (no cross-GPU events) and the split, against the SM and CE direct
# copies, 16 MiB - 1 GiB
p=/tmp/g; mkdir -p $p
dist/peerlink --version
save() { tar czf $OUT/g.tar.gz -C /tmp g; }
timeout 200 dist/peerlink bench -t d2d_write_ce -t d2d_read_sm -t d2d_relay -t d2d_relay_split -b 16M -e 1G -f 4 --json $p/relay-fixed.json > $p/relay-fixed.txt 2>&1; echo "bench: $?"
save
