# Session 27 call H: the two-shot test executable (its CommunicatorPush case now has PEERLINK_COLL_PUSH=1's
# parts: 96 MiB + 5 elements, 4 slots + 16 bytes with empty shards in the second part, a reduce-scatter of
# 20 MiB + 16 bytes per rank; AUTO's two phases at 16 and 40 MiB; the split two-shot; the two-shot reduce),
# which calls A-B did not run (their filter named the communicator executable); build 6b2434d.
[ -e dist/peerlink ] || { xz -dc dist/extra/peerlink.xz >dist/peerlink && chmod +x dist/peerlink; }
source scripts/device/call-lib.sh h
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t two_shot 400 dist/tests/gpu_test_communicator_two_shot
grep -E "^16 MiB|^96 MiB|^\[ +(OK|FAILED) " $p/two_shot.txt
save
