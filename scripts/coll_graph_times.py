#!/usr/bin/env python3
"""One line per `peerlink coll --json` run: its file name, then peerlink's out-of-place time in a CUDA graph
(us) at each size, for runs whose settings coll_compare.py cannot tell apart (experiment builds reading
variables peerlink does not register).

usage: scripts/coll_graph_times.py run1.json run2.json ...
"""
import json
import os
import sys

from coll_chart import size_label  # the size labels of the chart's tables (scripts/ is on sys.path)


def main(paths):
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        cells = []
        for row in run["rows"]:
            graph = row["out_of_place"]["peerlink_graph"]
            time = f"{graph['time_us']:.2f}" if graph.get("status") == "ok" else graph.get("status", "?")
            cells.append(f"{size_label(row['bytes'])} {time}")
        print(f"{os.path.basename(path)}: " + ", ".join(cells))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
