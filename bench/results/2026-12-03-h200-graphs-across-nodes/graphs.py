#!/usr/bin/env python3
"""Calls across nodes in CUDA graphs against eager, from peerlink coll's JSON (out of place, microseconds).

  python3 graphs.py RUN ...              per collective and size: peerlink eager, peerlink in a graph, NCCL in a
                                         graph where the run has it; graph / eager, and NCCL graph / peerlink graph
                                         (above 1: peerlink faster). RUN: a folder of coll-*.json (runs.tar.xz's c-nccl-1)
  python3 graphs.py --builds A1,A2 B1,B2 the same configurations of two builds, each the fastest of its rounds:
                                         A's time / B's time, eager and graph (call d: d-after-1,d-after-2 and
                                         d-before-1,d-before-2)
  python3 graphs.py --ratios A1:B1 A2:B2 ...
                                         per round (a pair of runs of two builds made one after the other), per
                                         collective and size: A's eager time / B's (calls m and n: the trial build
                                         against the queued one, e.g. m-ar-trial-1:m-ar-1 n-all_gather-trial-2:n-all_gather-2)
"""
import json
import pathlib
import sys

COLLECTIVES = ["all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "send_recv"]


def times(run, name, config):
    path = pathlib.Path(run) / f"coll-{name}.json"
    if not path.exists():
        return {}
    out = {}
    for row in json.loads(path.read_text())["rows"]:
        m = row["out_of_place"].get(config)
        if m and m["status"] == "ok" and m["wrong"] == 0:
            out[row["bytes"]] = m["time_us"]
    return out


def show(run):
    print(f"== {run}")
    print(f"{'collective':15} {'bytes':>7} {'eager':>7} {'graph':>7} {'nccl_g':>7} {'g/eager':>8} {'nccl_g/g':>8}")
    for name in COLLECTIVES:
        eager, graph, nccl = (times(run, name, c) for c in ("peerlink", "peerlink_graph", "nccl_graph"))
        for size in sorted(set(eager) & set(graph)):
            n = nccl.get(size)
            cells = [f"{eager[size]:7.1f}", f"{graph[size]:7.1f}", f"{n:7.1f}" if n else f"{'-':>7}",
                     f"{graph[size] / eager[size]:8.2f}", f"{n / graph[size]:8.2f}" if n else f"{'-':>8}"]
            print(f"{name:15} {size:>7} " + " ".join(cells))


def compare(a_runs, b_runs):
    print(f"== {a_runs} / {b_runs}, the fastest of each build's rounds")
    for name in COLLECTIVES:
        for config in ("peerlink", "peerlink_graph"):
            a = [times(r, name, config) for r in a_runs]
            b = [times(r, name, config) for r in b_runs]
            sizes = sorted(set.intersection(*(set(x) for x in a + b)))
            cells = [f"{s}:{min(x[s] for x in a):.1f}/{min(x[s] for x in b):.1f}" for s in sizes]
            print(f"{name:15} {config:15} " + " ".join(cells))


def ratios(pairs, config="peerlink"):
    print(f"== A's {config} time / B's, per round")
    for name in COLLECTIVES:
        rows = {}
        for pair in pairs:
            a_run, b_run = pair.split(":")
            a, b = times(a_run, name, config), times(b_run, name, config)
            for size in sorted(set(a) & set(b)):
                rows.setdefault(size, []).append(a[size] / b[size])
        for size, values in sorted(rows.items()):
            print(f"{name:15} {size:>9} " + " ".join(f"{v:.2f}" for v in sorted(values)))


if len(sys.argv) == 4 and sys.argv[1] == "--builds":
    compare(sys.argv[2].split(","), sys.argv[3].split(","))
elif len(sys.argv) > 2 and sys.argv[1] == "--ratios":
    ratios(sys.argv[2:])
else:
    for run in sys.argv[1:]:
        show(run)
