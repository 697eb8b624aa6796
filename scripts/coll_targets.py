#!/usr/bin/env python3
"""The collectives issue's targets, judged from `peerlink coll --json` runs: prints a Markdown table of each
target, what the runs measured and whether it is met, then every cell where peerlink in a CUDA graph is
behind NCCL's best configuration. Only what the runs cover is judged; a target no run covers says so.

Targets (4 GPUs; docs/performance.md): all-reduce 8 B - 64 KiB <= 4 us in a graph and <= 10 us eager;
all-reduce 128 KiB - 32 MiB >= 1.2x NCCL's best (graph time); at 512 MiB busbw all-reduce >= 365, all-gather
and reduce-scatter >= 350, all-to-all >= 355, broadcast >= 370 (peerlink in a graph, out of place); every
collective at least NCCL's best at every size. Only 4-GPU runs with peerlink's default settings are judged
(the targets are AUTO's); the others are named and passed over.

usage: scripts/coll_targets.py run1.json run2.json ...   (e.g. a device call's coll-*.json)
"""
import json
import sys

from coll_chart import size_label  # the same size labels as the chart's tables (scripts/ is on sys.path)
from coll_compare import label_of  # "defaults" or the PEERLINK_* settings a run changed

KIB = 1024
MIB = 1024 * KIB
BUSBW_AT_512M = {"all_reduce": 365, "all_gather": 350, "reduce_scatter": 350, "all_to_all": 355, "broadcast": 370}
PLACEMENTS = ("out_of_place", "in_place")


def measured(cell, config):
    m = cell.get(config) or {}
    return m if m.get("status") == "ok" else None


def cells_of(runs, collective):
    """(run, row, placement, cell) for every measured row of `collective`."""
    for run in runs:
        if run["options"]["collective"] != collective:
            continue
        for row in run["rows"]:
            for placement in PLACEMENTS:
                cell = row.get(placement)
                if cell:
                    yield run, row, placement, cell


def small_all_reduce(runs, config, limit_us):
    """The range of the cells' times, with the runs' iterations per cell: with few, a graph's own launch and an
    eager run's start weigh on every call (docs/performance.md judges these targets on 200-iteration runs)."""
    cells = [(run, measured(cell, config)["time_us"]) for run, row, _, cell in cells_of(runs, "all_reduce")
             if 8 <= row["bytes"] <= 64 * KIB and measured(cell, config)]
    if not cells:
        return "no run", "-"
    times = [t for _, t in cells]
    iterations = sorted({run["options"].get("iterations") for run, _ in cells if "options" in run} - {None})
    per_cell = f" ({'/'.join(str(i) for i in iterations)} iterations a cell)" if iterations else ""
    return f"{min(times):.2f}-{max(times):.2f} us{per_cell}", "met" if max(times) <= limit_us else "not met"


def all_reduce_ratio(runs):
    ratios = [(row["bytes"], cell["ratio_peerlink_graph"]) for _, row, _, cell in cells_of(runs, "all_reduce")
              if 128 * KIB <= row["bytes"] <= 32 * MIB and cell.get("ratio_peerlink_graph") is not None]
    if not ratios:
        return "no run", "-"
    low = [f"{size_label(b)} {r:.2f}x" for b, r in sorted(ratios) if r < 1.2]
    text = f"{min(r for _, r in ratios):.2f}-{max(r for _, r in ratios):.2f}x"
    return (text + ("; below 1.2x: " + ", ".join(low) if low else "")), "met" if not low else "not met"


def busbw_512m(runs, collective, target):
    graph = [measured(cell, "peerlink_graph")["busbw_gbps"] for _, row, placement, cell in cells_of(runs, collective)
             if row["bytes"] == 512 * MIB and placement == "out_of_place" and measured(cell, "peerlink_graph")]
    if not graph:
        return "no run", "-"
    nccl = [measured(cell, cell["best_nccl"])["busbw_gbps"] for _, row, placement, cell in cells_of(runs, collective)
            if row["bytes"] == 512 * MIB and placement == "out_of_place" and cell.get("best_nccl")
            and measured(cell, cell["best_nccl"])]
    text = f"{min(graph):.1f}-{max(graph):.1f}" if len(graph) > 1 else f"{graph[0]:.1f}"
    if nccl:
        text += f" (best NCCL {max(nccl):.1f})"
    return text, "met" if min(graph) >= target else "not met"


def behind(runs):
    """Every (collective, size, placement) where peerlink's graph time is behind NCCL's best."""
    rows = []
    collectives = sorted({run["options"]["collective"] for run in runs})
    for collective in collectives:
        for _, row, placement, cell in cells_of(runs, collective):
            ratio = cell.get("ratio_peerlink_graph")
            if ratio is not None and ratio < 1.0:
                rows.append(f"| {collective.replace('_', '-')} | {size_label(row['bytes'])} | {placement.replace('_', ' ')} | "
                            f"{ratio:.2f} | {cell['best_nccl']} |")
    return rows


def machine_of(names):
    """'4x NVIDIA H100 80GB HBM3' for four alike GPUs."""
    return ", ".join(f"{names.count(name)}x {name}" for name in sorted(set(names)))


def main(paths):
    if not paths:
        sys.exit(__doc__)
    runs = []
    for path in paths:
        run = json.load(open(path))
        if run.get("ranks") != 4 or label_of(run) != "defaults":
            print(f"passed over: {path} ({run.get('ranks')} ranks, {label_of(run)})")
            continue
        runs.append(run)
    if not runs:
        sys.exit("no 4-GPU run with the default settings")
    devices = sorted({machine_of(run.get("device_names", [])) for run in runs})
    commits = sorted({run.get("generated_by", {}).get("git_commit", "?") for run in runs})
    print(f"Runs: {len(runs)} on {'; '.join(devices)} (peerlink {', '.join(commits)})")
    if len(commits) > 1 or len(devices) > 1:
        print("Note: these runs come from several builds or machines; judge one build's runs on one machine.")
    print()
    print("| target | measured | verdict |")
    print("|---|---|---|")
    print("| all-reduce 8 B - 64 KiB <= 4 us in a graph | %s | %s |" % small_all_reduce(runs, "peerlink_graph", 4.0))
    print("| all-reduce 8 B - 64 KiB <= 10 us eager | %s | %s |" % small_all_reduce(runs, "peerlink", 10.0))
    print("| all-reduce >= 1.2x NCCL, 128 KiB - 32 MiB | %s | %s |" % all_reduce_ratio(runs))
    for collective, target in BUSBW_AT_512M.items():
        label = collective.replace("_", "-")
        print(f"| {label} 512 MiB busbw >= {target} GB/s | %s | %s |" % busbw_512m(runs, collective, target))
    late = behind(runs)
    print(f"| every collective >= NCCL's best | {len(late)} cells behind | {'met' if not late else 'not met'} |")
    if late:
        print("\n| collective | size | placement | NCCL / peerlink graph | NCCL's best |")
        print("|---|---:|---|---:|---|")
        print("\n".join(late))


if __name__ == "__main__":
    main(sys.argv[1:])
