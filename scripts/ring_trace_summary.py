#!/usr/bin/env python3
"""Summarizes peerlink_ring_trace JSON files: per cell, the median iteration (us), when each chain's last
block finished (us after the rank's first block started, the latest over ranks), the spread of those ends,
the block tail (the most any rank's last block ended after its median block), and the pace waits of the
chains' first ranks (us per head block, at the SM clock given by --mhz).

usage: scripts/ring_trace_summary.py [--mhz 1980] TRACE.json[.xz]...
"""
import argparse
import json
import lzma
import statistics

# A record: smid, chain, entered, started, finished (ns), rounds, stage, free, ready, pace waits (cycles).
CHAIN, ENTERED, FINISHED, PACE = 1, 2, 4, 9


def load(path):
    with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
        return json.load(f)


def summarize_cell(cell, mhz=1980.0):
    """(cell, median us, [chain end us...], spread us, block tail us, pace wait us per head block)."""
    steady = cell["us"][1:] or cell["us"]
    ends = {}
    pace = 0
    heads = 0
    tail = 0.0
    for records in cell["records"]:
        start = min(r[ENTERED] for r in records)
        finished = sorted((r[FINISHED] - start) / 1000.0 for r in records if r[FINISHED] >= start)
        if finished:
            tail = max(tail, finished[-1] - finished[len(finished) // 2])
        for r in records:
            if r[FINISHED] >= start:
                ends[r[CHAIN]] = max(ends.get(r[CHAIN], 0.0), (r[FINISHED] - start) / 1000.0)
            if len(r) > PACE:
                pace += r[PACE]
        heads += len(records) // max(1, len({r[CHAIN] for r in records}))
    chains = [ends[c] for c in sorted(ends)]
    return (cell["cell"], statistics.median(steady), chains, max(chains) - min(chains) if chains else 0.0, tail,
            pace / max(1, heads) / mhz)


def summarize(path, mhz):
    print(f"== {path}")
    print("  cell  median us   chain ends (us)                     spread   block tail   pace wait per head block (us)")
    for cell in load(path)["cells"]:
        index, median, chains, spread, tail, per_head = summarize_cell(cell, mhz)
        print(f"  {index:4d}  {median:9.1f}   " + " ".join(f"{e:7.0f}" for e in chains) +
              f"   {spread:6.0f}   {tail:10.0f}   {per_head:8.1f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mhz", type=float, default=1980.0, help="SM clock for the waits' cycles (default 1980)")
    parser.add_argument("traces", nargs="+")
    args = parser.parse_args(argv)
    for path in args.traces:
        summarize(path, args.mhz)


if __name__ == "__main__":
    main()
