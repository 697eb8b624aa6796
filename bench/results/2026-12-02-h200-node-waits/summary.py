#!/usr/bin/env python3
"""Medians over the small sizes (8 B - 8 KiB; --large: 1 MiB and up) of a call's runs, per collective, placement and
build: the eager call's time, the part outside the phases across nodes (time_us - across_nodes_us) and the phases
across nodes; every cell must have been checked right. The runs are CALL_FOLDER/runs.tar.xz (before-N/ and after-N/,
each `run-nodes.sh coll`'s outputs). usage: summary.py [--large] CALL_FOLDER [ROUND] (e.g. call-c; ROUND: only
before-ROUND and after-ROUND)"""
import json
import statistics
import sys
import tarfile

args = sys.argv[1:]
large = "--large" in args
args = [a for a in args if a != "--large"]
folder = args[0]
only = args[1] if len(args) > 1 else None
cells = {}
with tarfile.open(f"{folder}/runs.tar.xz") as runs:
    members = sorted((m for m in runs.getmembers() if m.isfile()), key=lambda m: m.name)
    for member in members:
        run, name = member.name.split("/")[-2:]
        if not (name.startswith("coll-") and name.endswith(".json")):
            continue
        build, round_ = run.rsplit("-", 1)  # before-N, after-N (any NAME-N)
        if only is not None and round_ != only:
            continue
        collective = name[len("coll-"):-len(".json")]
        rows = json.load(runs.extractfile(member))["rows"]
        for row in rows:
            if row["bytes"] == 0 or (row["bytes"] < 1 << 20 if large else row["bytes"] > 8192):
                continue
            for placement in ("out_of_place", "in_place"):
                m = row[placement]["peerlink"]
                if m["status"] != "ok":  # all-to-all has no in-place form
                    continue
                assert m["wrong"] == 0, (run, collective, row["bytes"], placement)
                t = m["time_us"]
                across = m.get("across_nodes_us", float("nan"))  # async calls return before their phases end
                cells.setdefault((collective, placement, build), []).append((t, t - across, across))
print(f"{'collective':15} {'placement':13} {'build':6} {'cells':>5} {'call us':>8} {'outside':>8} {'across':>8}")
for (collective, placement, build), values in sorted(cells.items()):
    med = [statistics.median(v[i] for v in values) for i in range(3)]
    print(f"{collective:15} {placement:13} {build:6} {len(values):5} {med[0]:8.1f} {med[1]:8.1f} {med[2]:8.1f}")
