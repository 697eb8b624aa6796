#!/usr/bin/env python3
"""Rewrites the JSON files under bench/results (or the folders given) without whitespace between tokens.

The device tool carries every tracked file beside dist/ within 64 MiB, and the results' indented JSON was
most of the tree (39.7 MiB of 54 in round 51). The values are unchanged: each file is parsed and written
back with its keys in their order, its numbers as Python reads them (doubles round-trip exactly) and its
text unescaped; a file that does not parse, or would not read back equal, is left as it is and named.
Run it before committing a round's results. Usage: scripts/compact-results.py [FOLDER ...]
"""
import json
import pathlib
import sys


def compact(path: pathlib.Path) -> int:
    """Bytes saved by rewriting `path` compactly (0 when it was compact already or is left alone)."""
    text = path.read_text(encoding="utf-8")
    try:
        value = json.loads(text)
    except ValueError as error:
        print(f"{path}: not JSON, left as it is ({error})", file=sys.stderr)
        return 0
    out = json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n"
    if json.loads(out) != value:
        print(f"{path}: would not read back equal, left as it is", file=sys.stderr)
        return 0
    if len(out.encode("utf-8")) >= len(text.encode("utf-8")):
        return 0
    path.write_text(out, encoding="utf-8")
    return len(text.encode("utf-8")) - len(out.encode("utf-8"))


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    folders = [pathlib.Path(f) for f in sys.argv[1:]] or [root / "bench" / "results"]
    saved = 0
    files = 0
    for folder in folders:
        for path in sorted(folder.rglob("*.json")):
            gained = compact(path)
            files += 1 if gained else 0
            saved += gained
    print(f"{files} files rewritten, {saved / 2**20:.2f} MiB saved")
    return 0


if __name__ == "__main__":
    sys.exit(main())
