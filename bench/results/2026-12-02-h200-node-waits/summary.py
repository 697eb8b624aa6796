#!/usr/bin/env python3
"""Medians over the small sizes (8 B - 8 KiB) of a call's runs, per collective, placement and build: the eager call's
time, the part outside the phases across nodes (time_us - across_nodes_us) and the phases across nodes; every cell
must have been checked right. usage: summary.py CALL_FOLDER [ROUND] (e.g. call-c; ROUND: only before-ROUND and
after-ROUND)"""
import json
import os
import statistics
import sys

folder = sys.argv[1]
only = sys.argv[2] if len(sys.argv) > 2 else None
cells = {}
for run in sorted(os.listdir(folder)):
    if not os.path.isdir(os.path.join(folder, run)):
        continue
    build, round_ = run.split("-")  # before-N, after-N
    if only is not None and round_ != only:
        continue
    for collective in ("all_reduce", "reduce_scatter", "all_gather"):
        with open(os.path.join(folder, run, f"coll-{collective}.json")) as f:
            rows = json.load(f)["rows"]
        for row in rows:
            if row["bytes"] == 0 or row["bytes"] > 8192:
                continue
            for placement in ("out_of_place", "in_place"):
                m = row[placement]["peerlink"]
                assert m["wrong"] == 0, (run, collective, row["bytes"], placement)
                t, across = m["time_us"], m["across_nodes_us"]
                cells.setdefault((collective, placement, build), []).append((t, t - across, across))
print(f"{'collective':15} {'placement':13} {'build':6} {'cells':>5} {'call us':>8} {'outside':>8} {'across':>8}")
for (collective, placement, build), values in sorted(cells.items()):
    med = [statistics.median(v[i] for v in values) for i in range(3)]
    print(f"{collective:15} {placement:13} {build:6} {len(values):5} {med[0]:8.1f} {med[1]:8.1f} {med[2]:8.1f}")
