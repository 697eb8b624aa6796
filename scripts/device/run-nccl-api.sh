#!/usr/bin/env bash
# NCCL's API over peerlink (libpeerlink_nccl.so.2) checked on the device machine with clients nobody here wrote,
# from the repository root with ./dist carried: scripts/device/pack-call.sh gpu_test_nccl_api
# gpu_test_nccl_api_processes, then scripts/build-nccl-tests.sh NCCL_TESTS_SOURCE (dist/nccl-tests). One phase a
# call (a command may run 600 s); each step's output goes to /tmp/call-nccl-api-PHASE/, packed into $OUT after
# every step (call-lib.sh's `save`). The real NCCL is PyTorch's (PEERLINK_NCCL_LIBRARY, set by call-lib.sh).
#
# usage: scripts/device/run-nccl-api.sh PHASE [GPUS]      (GPUS: 4 unless given)
#   tests        the GPU tests of the NCCL API
#   torch        scripts/device/nccl_api_torch.py under torchrun: the real NCCL, then peerlink (LD_PRELOAD), compared;
#                then peerlink with lazy creation
#   correctness  every nccl-tests binary on peerlink with -c 1: -g GPUS over every type and op, -g GPUS -G 20, and
#                mpirun -np GPUS with and without -R 2 (symmetric windows)
#   perf         every nccl-tests binary 8 B .. 512 MiB, the real NCCL then peerlink in this same call, -g GPUS,
#                mpirun -np GPUS -R 2 -G 20 (NCCL's fastest mode for small sizes) and the plain phase's runs, each
#                compared (nccl_api_compare.py)
#   plain        mpirun -np GPUS eager on unregistered buffers (-R 0, PyTorch's mode): the real NCCL then peerlink
#                (PLAIN_BINARIES, PLAIN_RUNS: below)
#   ddp          the DistributedDataParallel steps alone (200), the real NCCL and peerlink with
#                PEERLINK_COLL_SHARE_BUFFERS at AUTO and OFF (or the runs DDP_RUNS names), in turn twice (DDP_ROUNDS):
#                each run's median step, then every run against NCCL's rounds where it ran (ddp-compare.*: the
#                means' ratio, the losses, how many calls shared their buffers); DDP_ARGS sizes the model and its
#                batch (--model-width, --model-layers, --batch; by default a 77 M-parameter model at 32 sequences a
#                step, which the GPU paces)
#   gaps         scripts/device/kernel_gaps.py for the real NCCL and peerlink's runs (GAPS_RUNS: below): the GPU's
#                own cost per small kernel of the application's before and after collectives
#   sharing      the plain phase with PEERLINK_COLL_SHARE_BUFFERS at AUTO, ON and OFF (perf-plain-AUTO.txt, ...), each
#                compared with the real NCCL: where sharing at the call wins and where the staging windows do
set -uo pipefail
phase=${1:?usage: scripts/device/run-nccl-api.sh tests|torch|correctness|perf|plain|sharing|ddp|gaps [GPUS]}
gpus=${2:-4}
# shellcheck source=scripts/device/call-lib.sh
source scripts/device/call-lib.sh "call-nccl-api-$phase"
real_dir=$(dirname "${PEERLINK_NCCL_LIBRARY:?no real NCCL found: set PEERLINK_NCCL_LIBRARY}")
ours_dir=$PWD/dist/nccl_api
# The libnccl.so.2 link LD_LIBRARY_PATH finds: unpack-dist.sh (through call-lib.sh) made it again, as a link may not
# survive the carry.
tests_dir=$PWD/dist/nccl-tests
binaries="all_reduce all_gather reduce_scatter alltoall alltoallv broadcast reduce gather scatter sendrecv hypercube"
failed=0
for packed in "$tests_dir"/*.xz; do  # scripts/build-nccl-tests.sh packs them compressed
  [ -e "$packed" ] || continue
  [ -e "${packed%.xz}" ] || { xz -dc "$packed" >"${packed%.xz}" && chmod +x "${packed%.xz}"; }
done

# nccl_tests LOG LIBRARY_DIR MODE BINARY ARGS...: one nccl-tests run (MODE: local, or mpi for mpirun -np $gpus),
# its output appended to $p/LOG.txt after a marker line naming the binary and the arguments.
nccl_tests() {
  local log=$1 dir=$2 mode=$3 binary=$4
  shift 4
  echo "# nccl-tests binary: $binary $mode $*" >>"$p/$log.txt"
  local command=("$tests_dir/${binary}_perf" "$@")
  if [ "$mode" = mpi ]; then
    # Every PEERLINK_* setting of this shell reaches the ranks.
    local forwarded=() name
    for name in $(compgen -e | grep '^PEERLINK_'); do forwarded+=(-x "$name"); done
    command=(mpirun --allow-run-as-root -np "$gpus" --bind-to none --mca pml ob1 --mca btl "self,vader,tcp"
             -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE "${forwarded[@]}" "${command[@]}" -g 1)
  fi
  LD_LIBRARY_PATH="$dir:$tests_dir" timeout 280 "${command[@]}" >>"$p/$log.txt" 2>&1 || {
    echo "# exit $? of: $binary $mode $*" >>"$p/$log.txt"
    failed=1
  }
}

# run_parts RUN: a run named NAME[:VAR=VALUE,VAR=VALUE...] (PLAIN_RUNS, DDP_RUNS) into run_name, the array
# run_settings and run_dir, the folder of the NCCL library it runs: dist/nccl_api, or dist/ALT/nccl_api where the
# run sets LIB=ALT (another build's, carried by pack-call.sh's PACK_ALT="ALT=DIR"; its version copied to
# version-ALT.txt).
run_parts() {
  run_name=${1%%:*}
  run_settings=()
  run_dir=$ours_dir
  local all=() setting
  [ "$1" = "$run_name" ] || IFS=, read -ra all <<<"${1#*:}"
  for setting in "${all[@]}"; do
    if [[ $setting == LIB=* ]]; then
      run_dir=$PWD/dist/${setting#LIB=}/nccl_api
      if [ ! -e "$run_dir/libpeerlink_nccl.so.2" ]; then
        echo "run-nccl-api.sh: run $run_name: no $run_dir/libpeerlink_nccl.so.2 (pack-call.sh's PACK_ALT)" >&2
        exit 2
      fi
      cp "$PWD/dist/${setting#LIB=}/VERSION" "$p/version-${setting#LIB=}.txt" 2>/dev/null || true
    else
      run_settings+=("$setting")
    fi
  done
}

# plain_runs: one process per GPU, eager, unregistered buffers -- what PyTorch's DDP and FSDP call. PLAIN_BINARIES
# (default the six collectives) and PLAIN_RUNS: peerlink's runs, NAME[:VAR=VALUE,VAR=VALUE...] each, into
# perf-plain-NAME.txt (default: one, "peerlink", with no settings).
plain_runs() {
  local b run setting
  for run in ${PLAIN_RUNS:-peerlink}; do run_parts "$run"; done  # a bad run fails here, before any device time
  for b in ${PLAIN_BINARIES:-all_reduce all_gather reduce_scatter alltoall broadcast reduce}; do
    nccl_tests perf-plain-nccl "$real_dir" mpi "$b" -b 8 -e 512M -f 2 -c 0 -R 0
    for run in ${PLAIN_RUNS:-peerlink}; do
      run_parts "$run"
      for setting in "${run_settings[@]}"; do export "${setting?}"; done
      nccl_tests "perf-plain-$run_name" "$run_dir" mpi "$b" -b 8 -e 512M -f 2 -c 0 -R 0
      for setting in "${run_settings[@]}"; do unset "${setting%%=*}"; done
    done
  done
  save
}

# compare_plain_runs: each of plain_runs' peerlink runs against NCCL's, into perf-plain-compare.* (the run named
# peerlink) or perf-plain-NAME-compare.*.
compare_plain_runs() {
  local run compared
  for run in ${PLAIN_RUNS:-peerlink}; do
    run_parts "$run"
    compared=perf-plain-compare
    [ "$run_name" = peerlink ] || compared=perf-plain-$run_name-compare
    echo "== $run"
    python3 scripts/device/nccl_api_compare.py nccl-tests "$p/perf-plain-nccl.txt" "$p/perf-plain-$run_name.txt" \
      --json "$p/$compared.json" | tee "$p/$compared.txt"
  done
  save
}

case $phase in
  tests)
    t nccl_api 400 dist/tests/gpu_test_nccl_api --gtest_color=no
    t nccl_api_processes 180 dist/tests/gpu_test_nccl_api_processes --gtest_color=no
    grep -qE '^\[  FAILED' "$p"/nccl_api*.txt && failed=1
    ;;
  torch)
    # run_torch LOG [VAR=VALUE ...] -- ARGS...: a run's failed checks are judged by the comparison with the real
    # NCCL's run (checks failing on both are the caller's), so its exit code fails the phase only where it left no
    # report (a crash, a hang cut by the timeout).
    run_torch() {
      local log=$1
      shift
      local vars=()
      while [ "$1" != -- ]; do vars+=("$1"); shift; done
      shift
      timeout 240 env "${vars[@]}" torchrun --nproc-per-node "$gpus" scripts/device/nccl_api_torch.py \
        --out "$p/$log.json" "$@" >"$p/$log.txt" 2>&1 || [ -s "$p/$log.json" ] || failed=1
      echo "$log: $(tail -n 2 "$p/$log.txt" | tr '\n' ' ')"
    }
    run_torch torch-nccl --
    run_torch torch-peerlink "LD_PRELOAD=$ours_dir/libpeerlink_nccl.so.2" PEERLINK_DEBUG=INFO \
      PEERLINK_DEBUG_SUBSYS=INIT,COLL -- --expect-library peerlink
    save
    python3 scripts/device/nccl_api_compare.py torch "$p/torch-nccl.json" "$p/torch-peerlink.json" \
      --json "$p/torch-compare.json" | tee "$p/torch-compare.txt" || failed=1
    echo "served by peerlink: $(grep -c 'served by peerlink' "$p/torch-peerlink.txt") communicator lines;" \
      "by the real NCCL: $(grep -c 'served by NCCL' "$p/torch-peerlink.txt")"
    run_torch torch-peerlink-lazy "LD_PRELOAD=$ours_dir/libpeerlink_nccl.so.2" -- --init lazy \
      --expect-library peerlink --steps 5
    python3 scripts/device/nccl_api_compare.py torch "$p/torch-nccl.json" "$p/torch-peerlink-lazy.json" \
      --json "$p/torch-compare-lazy.json" | tee "$p/torch-compare-lazy.txt" || failed=1
    ;;
  correctness)
    for b in $binaries; do
      nccl_tests g "$ours_dir" local "$b" -g "$gpus" -b 8 -e 32M -f 8 -d all -o all -c 1 -n 2 -w 1
    done
    save
    for b in all_reduce all_gather reduce_scatter alltoall broadcast; do
      nccl_tests graph "$ours_dir" local "$b" -g "$gpus" -b 8 -e 32M -f 8 -c 1 -n 2 -w 1 -G 20
    done
    save
    for registration in 0 2; do
      for b in $binaries; do
        nccl_tests "mpi-R$registration" "$ours_dir" mpi "$b" -b 8 -e 32M -f 8 -c 1 -n 2 -w 1 -R "$registration"
      done
      save
    done
    for log in g graph mpi-R0 mpi-R2; do
      echo "$log: $(grep -c '^# nccl-tests binary' "$p/$log.txt") runs, rows with #wrong > 0:" \
        "$(awk '$1 ~ /^[0-9]+$/ && NF >= 13 && (($9 ~ /^[0-9]+$/ && $9 > 0) || ($13 ~ /^[0-9]+$/ && $13 > 0))' \
          "$p/$log.txt" | wc -l) (N/A: a test without that mode)," \
        "failed runs: $(grep -c '^# exit' "$p/$log.txt")"
    done
    grep -q '^# exit' "$p"/*.txt && failed=1
    ;;
  perf)
    for b in $binaries; do
      nccl_tests perf-g-nccl "$real_dir" local "$b" -g "$gpus" -b 8 -e 512M -f 2 -c 0
      nccl_tests perf-g-peerlink "$ours_dir" local "$b" -g "$gpus" -b 8 -e 512M -f 2 -c 0
    done
    save
    for b in all_reduce all_gather reduce_scatter alltoall broadcast; do
      nccl_tests perf-mpi-nccl "$real_dir" mpi "$b" -b 8 -e 512M -f 2 -c 0 -R 2 -G 20
      nccl_tests perf-mpi-peerlink "$ours_dir" mpi "$b" -b 8 -e 512M -f 2 -c 0 -R 2 -G 20
    done
    save
    plain_runs
    for mode in g mpi plain; do
      python3 scripts/device/nccl_api_compare.py nccl-tests "$p/perf-$mode-nccl.txt" "$p/perf-$mode-peerlink.txt" \
        --json "$p/perf-$mode-compare.json" | tee "$p/perf-$mode-compare.txt"
    done
    ;;
  plain)
    plain_runs
    compare_plain_runs
    ;;
  ddp)
    # DDP_RUNS: the runs of a round, NAME[:VAR=VALUE,VAR=VALUE...] each; "nccl" is the real NCCL, any other name
    # peerlink (LD_PRELOAD) with those settings.
    # DDP_ROUNDS: how many times each (default 2); DDP_ARGS: more arguments of nccl_api_torch.py, by default a model
    # whose step the GPU paces (77 M parameters, 32 sequences a step: bench/results/2026-11-30-h200x2-ddp-overlap/;
    # the script's own default, a small model at 8 sequences, is paced by the host's launches, whose speed varies
    # between runs more than the libraries differ).
    runs=${DDP_RUNS:-nccl auto:PEERLINK_COLL_SHARE_BUFFERS=AUTO off:PEERLINK_COLL_SHARE_BUFFERS=OFF}
    read -ra ddp_args <<<"${DDP_ARGS:---model-width 1024 --model-layers 6 --batch 32}"
    for run in $runs; do run_parts "$run"; done  # a bad run fails here, before any device time
    for round in $(seq 1 "${DDP_ROUNDS:-2}"); do
      for run in $runs; do
        run_parts "$run"
        settings=("${run_settings[@]}")
        # peerlink's runs log COLL at INFO unless they set PEERLINK_DEBUG: a few lines a communicator, among them the
        # teardown's count of calls that shared their buffers, which the comparison below reports.
        if [ "$run_name" != nccl ]; then
          settings=("LD_PRELOAD=$run_dir/libpeerlink_nccl.so.2" PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=COLL
            "${settings[@]}")
        fi
        log=ddp-$run_name-$round
        timeout 240 env "${settings[@]}" torchrun --nproc-per-node "$gpus" scripts/device/nccl_api_torch.py \
          --only-ddp --steps 200 "${ddp_args[@]}" --out "$p/$log.json" >"$p/$log.txt" 2>&1 || failed=1
        echo "$log: median step $(python3 -c "
import json
report = json.load(open('$p/$log.json'))
phases = report.get('ddp_phase_ms_median') or {}
spans = (report.get('ddp_profile') or {}).get('median') or {}
print('%.3f ms' % report['ddp_step_ms_median'] + ''.join('; %s %.2f ms' % kv for kv in phases.items()) +
      ''.join('; profiled %s %.0f' % kv for kv in spans.items()))" 2>/dev/null)"
      done
      save
    done
    if [ -e "$p/ddp-nccl-1.json" ]; then  # DDP_RUNS named the real NCCL
      python3 scripts/device/nccl_api_compare.py ddp "$p" --json "$p/ddp-compare.json" | tee "$p/ddp-compare.txt"
      [ "${PIPESTATUS[0]}" = 0 ] || failed=1
    fi
    ;;
  gaps)
    # GAPS_RUNS: the runs, NAME[:VAR=VALUE,VAR=VALUE...] each ("nccl" the real NCCL, any other name peerlink with
    # those settings), each scripts/device/kernel_gaps.py under torchrun: one line of JSON a run into gaps.txt.
    runs=${GAPS_RUNS:-nccl peerlink direct:PEERLINK_COLL_EAGER_GRAPHS=0 forwarded:PEERLINK_NCCL_FALLBACK=ALL}
    for run in $runs; do run_parts "$run"; done  # a bad run fails here, before any device time
    for run in $runs; do
      run_parts "$run"
      settings=("${run_settings[@]}")
      [ "$run_name" = nccl ] || settings=("LD_PRELOAD=$run_dir/libpeerlink_nccl.so.2" "${settings[@]}")
      timeout 120 env "${settings[@]}" torchrun --nproc-per-node "$gpus" scripts/device/kernel_gaps.py \
        --name "$run_name" >"$p/gaps-$run_name.txt" 2>&1 || failed=1
      grep '^{' "$p/gaps-$run_name.txt" | tee -a "$p/gaps.txt"
    done
    save
    ;;
  sharing)
    PLAIN_RUNS="AUTO:PEERLINK_COLL_SHARE_BUFFERS=AUTO ON:PEERLINK_COLL_SHARE_BUFFERS=ON OFF:PEERLINK_COLL_SHARE_BUFFERS=OFF"
    plain_runs
    compare_plain_runs
    ;;
  *)
    echo "run-nccl-api.sh: unknown phase '$phase' (tests, torch, correctness, perf, plain, sharing, ddp)" >&2
    exit 2
    ;;
esac
save
verdict=$([ $failed = 0 ] && echo 'every step passed' || echo 'some failed')
echo "nccl-api $phase: $verdict; results in \$OUT/call-nccl-api-$phase.tar.gz"
exit $failed
