#!/bin/bash
# One H200: the NCCL API's GPU tests (a world of one on one GPU: the calls left out and the copies) under
# compute-sanitizer memcheck with leak checking, and synccheck.
scripts/device/call.sh f \
  'TOOLS=memcheck PEERLINK_TIMEOUT_MS=60000 run memcheck 250 scripts/device/run-sanitizer.sh gpu_test_nccl_api' \
  'TOOLS=synccheck PEERLINK_TIMEOUT_MS=60000 run synccheck 200 scripts/device/run-sanitizer.sh gpu_test_nccl_api'
