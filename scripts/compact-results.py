#!/usr/bin/env python3
"""Rewrites the JSON files under bench/results (or the folders given) without whitespace between tokens.

The device tool carries every tracked file beside dist/ within 64 MiB, and the results' indented JSON was
most of the tree (39.7 MiB of 54 in round 51). The values are unchanged: each file is parsed and written
back with its keys in their order, its numbers as Python reads them (doubles round-trip exactly) and its
text unescaped; a file that does not parse, or would not read back equal, is left as it is and named.
Run it before committing a round's results. Usage: scripts/compact-results.py [--check] [FOLDER ...]
--check rewrites nothing: it names each file it would rewrite and exits 1 if there is one (a CPU test runs it over
bench/results, so indented results do not creep back).
"""
import json
import pathlib
import sys


def compact(path: pathlib.Path, write: bool = True) -> int:
    """Bytes saved by rewriting `path` compactly (0 when it was compact already or is left alone); with `write`
    False, what it would save, the file untouched."""
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
    if write:
        path.write_text(out, encoding="utf-8")
    return len(text.encode("utf-8")) - len(out.encode("utf-8"))


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    args = sys.argv[1:]
    check = "--check" in args
    folders = [pathlib.Path(f) for f in args if f != "--check"] or [root / "bench" / "results"]
    saved = 0
    files = 0
    for folder in folders:
        for path in sorted(folder.rglob("*.json")):
            gained = compact(path, write=not check)
            if gained and check:
                print(f"{path}: not compact ({gained} bytes of whitespace)")
            files += 1 if gained else 0
            saved += gained
    if check:
        print(f"{files} files not compact: run scripts/compact-results.py" if files else "every file compact")
        return 1 if files else 0
    print(f"{files} files rewritten, {saved / 2**20:.2f} MiB saved")
    return 0


if __name__ == "__main__":
    sys.exit(main())
