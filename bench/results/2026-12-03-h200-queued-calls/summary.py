#!/usr/bin/env python3
"""Per collective and size (128 KiB and up, out of place), the median over rounds of peerlink's eager call under
PEERLINK_NET_ASYNC=OFF (sync: every call across nodes waits on the host) and ON (async: small calls one kernel,
larger ones queued), from CALL_FOLDER/runs.tar.xz (sync-N/ and async-N/, each `run-nodes.sh coll`'s outputs); every
cell must have been checked right. usage: summary.py CALL_FOLDER"""
import json
import statistics
import sys
import tarfile

cells = {}
with tarfile.open(f"{sys.argv[1]}/runs.tar.xz") as runs:
    for member in runs.getmembers():
        if not (member.isfile() and member.name.endswith(".json")):
            continue
        run, name = member.name.split("/")[-2:]
        build = run.rsplit("-", 1)[0]
        if build not in ("sync", "async"):
            continue
        for row in json.load(runs.extractfile(member))["rows"]:
            cell = row["out_of_place"]["peerlink"]
            if cell["status"] != "ok" or row["bytes"] < 131072:
                continue
            assert cell["wrong"] == 0, (run, name, row["bytes"])
            cells.setdefault((name[len("coll-"):-len(".json")], row["bytes"], build), []).append(cell["time_us"])
sizes = sorted({b for _, b, _ in cells})
print(f"{'collective':15}" + "".join(f"{b:>22}" for b in sizes))
for collective in sorted({c for c, _, _ in cells}):
    line = f"{collective:15}"
    for b in sizes:
        sync = statistics.median(cells[(collective, b, "sync")])
        async_ = statistics.median(cells[(collective, b, "async")])
        line += f"{f'{sync:.0f} -> {async_:.0f} ({async_ / sync:.2f})':>22}"
    print(line)
