#!/usr/bin/env python3
"""Per collective and size (out of place), the median over rounds of peerlink's eager call for each build of a call
(CALL_FOLDER/runs.tar.xz: NAME-N/ folders, each `run-nodes.sh coll`'s outputs: sync, async, before, nccl), and each
build's time over the first build named; every cell must have been checked right.
usage: sizes.py CALL_FOLDER BUILD [BUILD ...] (e.g. call-a before async sync)"""
import json
import statistics
import sys
import tarfile

folder, builds = sys.argv[1], sys.argv[2:]
cells = {}
with tarfile.open(f"{folder}/runs.tar.xz") as runs:
    for member in runs.getmembers():
        if not (member.isfile() and member.name.endswith(".json")):
            continue
        run, name = member.name.split("/")[-2:]
        build = run.rsplit("-", 1)[0]
        if build not in builds or not name.startswith("coll-"):
            continue
        collective = name[len("coll-"):-len(".json")]
        for row in json.load(runs.extractfile(member))["rows"]:
            cell = row["out_of_place"]
            if not cell.get("checked", True) or cell.get("wrong", 0):
                sys.exit(f"{run}/{name}: {row['bytes']} B not checked right")
            cells.setdefault((collective, row["bytes"], build), []).append(cell["peerlink"]["time_us"])
for collective in sorted({c for c, _, _ in cells}):
    print(f"== {collective} (us, median of rounds; in parentheses / {builds[0]})")
    print(f"{'bytes':>8} " + " ".join(f"{b:>16}" for b in builds))
    for size in sorted({s for c, s, _ in cells if c == collective}):
        first = statistics.median(cells.get((collective, size, builds[0]), [float("nan")]))
        line = f"{size:>8} "
        for b in builds:
            t = statistics.median(cells.get((collective, size, b), [float("nan")]))
            line += f"{t:>8.1f} ({t / first:4.2f}) " if b != builds[0] else f"{t:>16.1f} "
        print(line)
