#!/usr/bin/env python3
"""Medians of `peerlink coll` runs over a range of sizes, a row per run, for comparing builds or settings run
one after another on one machine: eager times move by a microsecond or two between runs of one build, so a
comparison needs several alternated runs and one figure per run. Each run is labelled by its build (the
commit that made the binary) and the settings that differ from their defaults; a last table gathers the runs
of each label.

usage: scripts/coll_medians.py [--config NAME] [--from SIZE] [--to SIZE] run.json ...
  --config  peerlink (eager, the default), peerlink_graph, nccl, nccl_graph or nccl_symmetric
  --from, --to  the sizes counted, in bytes or with K, M, G (default: every size above 0)
"""
import argparse
import json
import os
import statistics
import sys

from coll_compare import label_of  # scripts/ is on sys.path
from coll_fit import parse_size


def times(run, config, placement, lo, hi):
    """The run's times in us of `config` for sizes in [lo, hi], skipping sizes it did not measure."""
    result = []
    for row in run["rows"]:
        if not lo <= row["bytes"] <= hi:
            continue
        time = row[placement].get(config, {}).get("time_us")
        if time is not None:
            result.append(time)
    return result


def summary(values):
    """(median, min, max) or None."""
    if not values:
        return None
    return statistics.median(values), min(values), max(values)


def build_of(run):
    return run.get("generated_by", {}).get("git_commit", "?")


def rows_of(paths, config, lo, hi):
    """[(file, build, settings, out-of-place summary, in-place summary)] in the order given."""
    rows = []
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        rows.append((os.path.basename(path), build_of(run), label_of(run),
                     summary(times(run, config, "out_of_place", lo, hi)),
                     summary(times(run, config, "in_place", lo, hi))))
    return rows


def cell(values):
    return "—" if values is None else f"{values[0]:.2f} ({values[1]:.2f}–{values[2]:.2f})"


def main(argv):
    parser = argparse.ArgumentParser(
        prog="coll_medians.py", description="Each `peerlink coll` run's median time over a range of sizes.")
    parser.add_argument("runs", nargs="+", metavar="run.json")
    parser.add_argument("--config", default="peerlink",
                        help="peerlink (eager, the default), peerlink_graph, nccl, nccl_graph or nccl_symmetric")
    parser.add_argument("--from", dest="lo", type=parse_size, default=1, metavar="SIZE",
                        help="the smallest size counted, in bytes or with K, M, G (default: every size above 0)")
    parser.add_argument("--to", dest="hi", type=parse_size, default=float("inf"), metavar="SIZE",
                        help="the largest size counted")
    options = parser.parse_args(argv)
    config, lo, hi, paths = options.config, options.lo, options.hi, options.runs
    rows = rows_of(paths, config, lo, hi)
    print(f"{config}: median time in us over the sizes counted (min–max), a row per run")
    print()
    print("| run | build | settings | out of place | in place |")
    print("|---|---|---|---:|---:|")
    for name, build, settings, out, inplace in rows:
        print(f"| {name} | {build} | {settings} | {cell(out)} | {cell(inplace)} |")
    print()
    print("| build | settings | runs | out-of-place medians | in-place medians |")
    print("|---|---|---:|---|---|")
    groups = {}
    for name, build, settings, out, inplace in rows:
        groups.setdefault((build, settings), []).append((out, inplace))
    for (build, settings), runs in groups.items():
        outs = " / ".join("—" if o is None else f"{o[0]:.2f}" for o, _ in runs)
        ins = " / ".join("—" if i is None else f"{i[0]:.2f}" for _, i in runs)
        print(f"| {build} | {settings} | {len(runs)} | {outs} | {ins} |")


if __name__ == "__main__":
    main(sys.argv[1:])
