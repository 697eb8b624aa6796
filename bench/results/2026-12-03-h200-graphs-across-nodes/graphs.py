#!/usr/bin/env python3
"""Per collective and size, out of place: peerlink eager and in a CUDA graph, and NCCL in a graph where the run has
it, in microseconds; then graph / eager (peerlink) and NCCL graph / peerlink graph (above 1: peerlink faster).
usage: python3 graphs.py RUN_DIR ...   (each a folder of coll-*.json, e.g. call-c-nccl-1)"""
import json
import pathlib
import sys

COLLECTIVES = ["all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "send_recv"]


def time_of(row, config):
    m = row["out_of_place"].get(config)
    return m["time_us"] if m and m["status"] == "ok" and m["wrong"] == 0 else None


def show(run):
    print(f"== {run}")
    print(f"{'collective':15} {'bytes':>7} {'eager':>7} {'graph':>7} {'nccl_g':>7} {'g/eager':>8} {'nccl_g/g':>8}")
    for name in COLLECTIVES:
        path = pathlib.Path(run) / f"coll-{name}.json"
        if not path.exists():
            continue
        for row in json.loads(path.read_text())["rows"]:
            eager, graph, nccl = (time_of(row, c) for c in ("peerlink", "peerlink_graph", "nccl_graph"))
            if eager is None or graph is None:
                continue
            cells = [f"{eager:7.1f}", f"{graph:7.1f}", f"{nccl:7.1f}" if nccl else f"{'-':>7}",
                     f"{graph / eager:8.2f}", f"{nccl / graph:8.2f}" if nccl else f"{'-':>8}"]
            print(f"{name:15} {row['bytes']:>7} " + " ".join(cells))


for run in sys.argv[1:]:
    show(run)
