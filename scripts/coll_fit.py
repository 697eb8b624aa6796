#!/usr/bin/env python3
"""A straight line through each `peerlink coll --json` run's large sizes: time = fixed + per_mib x MiB, by
least squares over the sizes from --from to --to (default 128 MiB to 1 GiB), for peerlink in a CUDA graph and
for the best NCCL configuration of the same run. `fixed` is what a call costs beyond its bytes (launch,
barriers, a pipeline's fill), `per_mib` the marginal time; the rate is the message's bytes over it (busbw
factors not applied). Each run is named by its file and labelled by its settings as scripts/coll_compare.py
labels them.

usage: scripts/coll_fit.py [--in-place] [--from SIZE] [--to SIZE] run1.json run2.json ...
       (SIZE in bytes or with K, M, G)
"""
import json
import os
import sys

from coll_compare import label_of, times_of  # scripts/ is on sys.path

MIB = 1024 * 1024


def parse_size(text):
    units = {"K": 1024, "M": MIB, "G": 1024 * MIB}
    if text and text[-1].upper() in units:
        return int(float(text[:-1]) * units[text[-1].upper()])
    return int(text)


def fit(points):
    """(fixed us, us per MiB) of the least-squares line through [(MiB, us)]; None under two points."""
    if len(points) < 2:
        return None
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx
    return mean_y - slope * mean_x, slope


def line_of(table, which, lo, hi):
    points = [(size / MIB, times[which]) for size, times in sorted(table.items())
              if lo <= size <= hi and times[which] is not None]
    return fit(points), len(points)


def cells(result):
    line, count = result
    if line is None:
        return f"— | — | — | {count}"
    fixed, per_mib = line
    rate = MIB / (per_mib * 1e3) if per_mib > 0 else float("inf")  # bytes per us = MB/s; /1e3 -> GB/s
    return f"{fixed:.1f} | {per_mib:.4f} | {rate:.1f} | {count}"


def main(argv):
    placement = "out_of_place"
    lo, hi = 128 * MIB, 1024 * MIB
    paths = []
    args = iter(argv)
    for arg in args:
        if arg == "--in-place":
            placement = "in_place"
        elif arg in ("--from", "--to"):
            value = next(args, None)
            if value is None:
                sys.exit(f"{arg} needs a size\n{__doc__}")
            if arg == "--from":
                lo = parse_size(value)
            else:
                hi = parse_size(value)
        elif arg.startswith("-"):
            sys.exit(f"unknown option {arg}\n{__doc__}")
        else:
            paths.append(arg)
    if not paths:
        sys.exit(__doc__)
    runs = [json.load(open(path)) for path in paths]
    print(f"{placement.replace('_', ' ')}, sizes {lo // MIB} MiB - {hi // MIB} MiB: time = fixed + per MiB x MiB "
          "(least squares; rate = 1 MiB / per MiB)")
    print()
    print("| file | settings | collective | who | fixed (us) | per MiB (us) | rate (GB/s) | sizes |")
    print("|---|---|---|---|---:|---:|---:|---:|")
    for path, run in zip(paths, runs):
        head = f"| {os.path.basename(path)} | {label_of(run)} | {run['options']['collective']} |"
        table = times_of(run, placement)
        print(f"{head} peerlink graph | " + cells(line_of(table, 0, lo, hi)) + " |")
        nccl = line_of(table, 1, lo, hi)
        if nccl[1] > 0:
            print(f"{head} best NCCL | " + cells(nccl) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
