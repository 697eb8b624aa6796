#!/bin/bash
# One H200: blocked_streams.py (no library); the arena ring under memcheck and its tests capped and direct.
scripts/device/unpack-dist.sh >/dev/null
python3 bench/results/2026-12-01-h200x2-ddp-gaps/blocked_streams.py > /tmp/blocked.txt 2>&1; cat /tmp/blocked.txt
python3 bench/results/2026-12-01-h200x2-ddp-gaps/blocked_streams.py --kernels 200 >> /tmp/blocked.txt 2>&1; tail -1 /tmp/blocked.txt
mkdir -p $OUT && cp /tmp/blocked.txt $OUT/
bash dist/call-b.sh
