#!/usr/bin/env python3
"""Ratio chart of `peerlink coll` runs: for each collective's JSON (peerlink.coll schema), the best NCCL
configuration's time divided by peerlink's graph time, out of place, per size (above 1: peerlink is faster).
Writes one self-contained SVG (no scripts, no external references) and prints a Markdown table.

usage: scripts/coll_chart.py OUT.svg coll-all_reduce.json coll-all_gather.json ...
"""
import json
import math
import sys

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]


def size_label(n):
    for unit in ["B", "K", "M", "G"]:
        if n < 1024:
            return f"{n:g}{unit}"
        n /= 1024
    return f"{n:g}T"


def series_of(path):
    run = json.load(open(path))
    points = []
    for row in run["rows"]:
        cell = row["out_of_place"]
        ratio = cell.get("ratio_peerlink_graph")
        if ratio is None:
            continue
        best = cell.get("best_nccl")
        points.append({"bytes": row["bytes"], "ratio": ratio, "peerlink": cell["peerlink_graph"]["time_us"],
                       "nccl": cell[best]["time_us"], "config": best,
                       "algorithm": row.get("peerlink_algorithm", "").split(":")[0]})
    return run["options"]["collective"], run["ranks"], points


def chart(series, out):
    width, height, left, right, top, bottom = 760, 380, 60, 150, 20, 50
    sizes = sorted({p["bytes"] for _, _, pts in series for p in pts})
    lo, hi = math.log2(sizes[0]), math.log2(sizes[-1])
    rmax = max(1.6, max(p["ratio"] for _, _, pts in series for p in pts) * 1.05)
    x = lambda b: left + (math.log2(b) - lo) / max(hi - lo, 1) * (width - left - right)
    y = lambda r: top + (1 - r / rmax) * (height - top - bottom)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="11">', f'<rect width="{width}" height="{height}" fill="white"/>']
    for r in [0.5 * i for i in range(int(rmax / 0.5) + 1)]:
        svg.append(f'<line x1="{left}" x2="{width - right}" y1="{y(r):.1f}" y2="{y(r):.1f}" '
                   f'stroke="{"#000" if r == 1 else "#ddd"}"/>')
        svg.append(f'<text x="{left - 6}" y="{y(r) + 4:.1f}" text-anchor="end">{r:.1f}x</text>')
    for b in sizes[::2]:
        svg.append(f'<text x="{x(b):.1f}" y="{height - bottom + 16}" text-anchor="middle">{size_label(b)}</text>')
    svg.append(f'<text x="{(left + width - right) / 2}" y="{height - 8}" text-anchor="middle">message size '
               f'(nccl-tests\' size column)</text>')
    svg.append(f'<text x="14" y="{(top + height - bottom) / 2}" transform="rotate(-90 14 '
               f'{(top + height - bottom) / 2})" text-anchor="middle">best NCCL time / peerlink graph time</text>')
    for i, (name, _, pts) in enumerate(series):
        color = COLORS[i % len(COLORS)]
        path = " ".join(f'{"M" if j == 0 else "L"}{x(p["bytes"]):.1f},{y(p["ratio"]):.1f}' for j, p in enumerate(pts))
        svg.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for p in pts:
            svg.append(f'<circle cx="{x(p["bytes"]):.1f}" cy="{y(p["ratio"]):.1f}" r="2.5" fill="{color}"/>')
        svg.append(f'<text x="{width - right + 10}" y="{top + 16 * (i + 1)}" fill="{color}">{name}</text>')
    svg.append("</svg>")
    open(out, "w").write("\n".join(svg) + "\n")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    series = [series_of(path) for path in sys.argv[2:]]
    chart(series, sys.argv[1])
    for name, ranks, pts in series:
        print(f"\n{name}, {ranks} GPUs, out of place (us; ratio = best NCCL / peerlink graph)\n")
        print("| size | peerlink graph | best NCCL | NCCL config | ratio | peerlink algorithm |")
        print("|---:|---:|---:|---|---:|---|")
        for p in pts:
            print(f"| {size_label(p['bytes'])} | {p['peerlink']:.2f} | {p['nccl']:.2f} | {p['config']} | "
                  f"{p['ratio']:.2f} | {p['algorithm']} |")


if __name__ == "__main__":
    main()
