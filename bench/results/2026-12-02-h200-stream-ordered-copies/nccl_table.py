#!/usr/bin/env python3
"""peerlink beside NCCL in one run across 2 virtual nodes (call c's nccl-1: `run-nodes.sh coll` with COLL_NCCL=1):
per collective and size, peerlink's eager call (out of place), NCCL's best of its three configurations (plain, graph,
symmetric windows), and their ratio (NCCL / peerlink: above 1, peerlink is faster). Every cell must have been checked
right. usage: nccl_table.py CALL_FOLDER [RUN] (RUN: the folder inside runs.tar.xz, default nccl-1)"""
import json
import sys
import tarfile

folder = sys.argv[1]
wanted = sys.argv[2] if len(sys.argv) > 2 else "nccl-1"
with tarfile.open(f"{folder}/runs.tar.xz") as runs:
    for member in sorted((m for m in runs.getmembers() if m.isfile()), key=lambda m: m.name):
        run, name = member.name.split("/")[-2:]
        if run != wanted or not (name.startswith("coll-") and name.endswith(".json")):
            continue
        print(f"== {name[len('coll-'):-len('.json')]}")
        print(f"{'bytes':>10} {'peerlink us':>12} {'NCCL us':>9} {'NCCL best':>15} {'ratio':>6}")
        for row in json.load(runs.extractfile(member))["rows"]:
            cell = row["out_of_place"]
            mine = cell["peerlink"]
            if mine["status"] != "ok":
                continue
            assert mine["wrong"] == 0, (name, row["bytes"])
            best = cell["best_nccl"]
            theirs = cell[best]
            assert theirs["wrong"] == 0, (name, row["bytes"], best)
            print(f"{row['bytes']:>10} {mine['time_us']:>12.1f} {theirs['time_us']:>9.1f} {best:>15} "
                  f"{theirs['time_us'] / mine['time_us']:>6.2f}")
