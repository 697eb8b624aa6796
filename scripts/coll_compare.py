#!/usr/bin/env python3
"""Side by side: several `peerlink coll` runs of one collective under different PEERLINK_* settings (the
crossover sweeps of scripts/device/run-crossover.sh). Prints a Markdown table of peerlink's time in a CUDA
graph per size and run, the fastest run marked, and the best NCCL time of any run that measured NCCL. Each
run is labelled by the settings that differ from their defaults (`PEERLINK_PROTO=SIMPLE`, or `defaults`).

usage: scripts/coll_compare.py [--in-place] run1.json run2.json ...
"""
import json
import sys

from coll_chart import size_label  # the same size labels as the chart's tables (scripts/ is on sys.path)


# Settings that do not change what peerlink runs.
NOT_BEHAVIOUR = {"PEERLINK_NCCL_LIBRARY", "PEERLINK_DEBUG", "PEERLINK_DEBUG_SUBSYS", "PEERLINK_DOCTOR_CACHE_DIR"}


def label_of(run):
    changed = [f"{p['name']}={p['value']}" for p in run.get("parameters", [])
               if p.get("source") != "default" and p["name"] not in NOT_BEHAVIOUR]
    return " ".join(changed) if changed else "defaults"


def distinct(labels):
    """Numbers repeated labels (runs of the same settings, e.g. from two commits): 'x (2)'."""
    seen = {}
    result = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        result.append(label if labels.count(label) == 1 else f"{label} ({seen[label]})")
    return result


def times_of(run, placement):
    """bytes -> (peerlink graph us or None, best NCCL us or None)"""
    result = {}
    for row in run["rows"]:
        cell = row[placement]
        ours = cell.get("peerlink_graph", {}).get("time_us")
        best = cell.get("best_nccl")
        nccl = cell[best]["time_us"] if best else None
        result[row["bytes"]] = (ours, nccl)
    return result


def main(argv):
    placement = "out_of_place"
    paths = []
    for arg in argv:
        if arg == "--in-place":
            placement = "in_place"
        elif arg.startswith("-"):
            sys.exit(f"unknown option {arg}\n{__doc__}")
        else:
            paths.append(arg)
    if len(paths) < 1:
        sys.exit(__doc__)
    runs = [json.load(open(path)) for path in paths]
    collectives = {run["options"]["collective"] for run in runs}
    if len(collectives) != 1:
        sys.exit(f"the runs are of different collectives: {sorted(collectives)}")
    labels = distinct([label_of(run) for run in runs])
    tables = [times_of(run, placement) for run in runs]
    sizes = sorted({size for table in tables for size in table if size > 0})
    print(f"{collectives.pop()}, {runs[0]['ranks']} GPUs, {placement.replace('_', ' ')}: peerlink in a graph, us "
          "(fastest in bold), and the best NCCL time of any run")
    print()
    print("| size | " + " | ".join(labels) + " | best NCCL |")
    print("|---:|" + "---:|" * (len(labels) + 1))
    for size in sizes:
        ours = [table.get(size, (None, None))[0] for table in tables]
        nccl = [t for t in (table.get(size, (None, None))[1] for table in tables) if t is not None]
        fastest = min((t for t in ours if t is not None), default=None)
        cells = []
        for t in ours:
            if t is None:
                cells.append("—")
            elif t == fastest and len([x for x in ours if x is not None]) > 1:
                cells.append(f"**{t:.2f}**")
            else:
                cells.append(f"{t:.2f}")
        best = f"{min(nccl):.2f}" if nccl else "—"
        print(f"| {size_label(size)} | " + " | ".join(cells) + f" | {best} |")


if __name__ == "__main__":
    main(sys.argv[1:])
