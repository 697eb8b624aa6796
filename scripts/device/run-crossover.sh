#!/usr/bin/env bash
# Crossover sweeps on the device machine, from the repository root with ./dist carried: each collective of
# COLL_LIST from CROSS_MIN to CROSS_MAX (factor 2) under the defaults, with NCCL in the same run, then
# under each setting of CROSS_VARIANTS (space-separated NAME=VALUE, peerlink only), and a side-by-side
# table per collective (scripts/coll_compare.py) to place the LL / direct / push crossovers. CROSS_GPUS
# (optional) runs on that many of the machine's GPUs (`coll -g`), e.g. 2 on a 4-GPU machine. Everything
# lands in $OUT/crossover.tar.gz (the device tool returns few files), rewritten after each collective; the
# tables are printed too.
set -uo pipefail
scripts/device/unpack-dist.sh  # what pack-call.sh carried compressed
out=${OUT:-/tmp/peerlink-crossover}
work="$out/crossover"
mkdir -p "$work"
export NCCL_NVLS_ENABLE=0  # never NVLink multicast on the shared machines
if [ -z "${PEERLINK_NCCL_LIBRARY:-}" ]; then
  PEERLINK_NCCL_LIBRARY=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))" 2>/dev/null)
  export PEERLINK_NCCL_LIBRARY
fi
min=${CROSS_MIN:-64K}
max=${CROSS_MAX:-16M}
gpus=()
tag=""
if [ -n "${CROSS_GPUS:-}" ]; then
  gpus=(-g "$CROSS_GPUS")
  tag="g$CROSS_GPUS-"
fi
for c in ${COLL_LIST:-all_reduce all_gather reduce_scatter all_to_all broadcast}; do
  runs=("$work/$tag$c-defaults.json")
  timeout 200 dist/peerlink coll "${gpus[@]}" -o "$c" -b "$min" -e "$max" -f 2 --json "${runs[0]}" \
    >"$work/$tag$c-defaults.txt" 2>&1
  echo "$c defaults: exit $?"
  for v in ${CROSS_VARIANTS:-PEERLINK_PROTO=LL PEERLINK_PROTO=SIMPLE}; do
    name=$(echo "$v" | tr -c 'A-Za-z0-9_\n' '_')
    runs+=("$work/$tag$c-$name.json")
    env "$v" timeout 200 dist/peerlink coll "${gpus[@]}" -o "$c" -b "$min" -e "$max" -f 2 --no-nccl \
      --json "$work/$tag$c-$name.json" >"$work/$tag$c-$name.txt" 2>&1
    echo "$c $v: exit $?"
  done
  python3 scripts/coll_compare.py "${runs[@]}" | tee "$work/${tag}compare-$c.md"
  python3 scripts/coll_compare.py --in-place "${runs[@]}" >"$work/${tag}compare-$c-in-place.md" 2>/dev/null
  # After every collective, so a run cut off by its time limit still returns what it finished.
  tar -czf "$out/${tag}crossover.tar.gz" -C "$out" crossover
done
rm -rf "$work"
