"""``peerlink`` and ``python -m peerlink``: the command-line tool the package carries (``peerlink --help``),
and ``nccl-path``, answered here so that it works whatever the package was built with."""

from __future__ import annotations

import os
import sys
from typing import List, Optional

from . import _bundle
from .nccl import find_nccl_library


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["nccl-path"]:
        library = find_nccl_library()
        if library.path is None:
            print(f"peerlink: no NCCL-API library: {library.reason}", file=sys.stderr)
            return 1
        print(library.path)
        return 0
    program = _bundle.executable()
    if program is None:
        print(
            f"peerlink: the peerlink program is not in this package ({_bundle.BIN_DIR / 'peerlink'} is missing); "
            "reinstall peerlink with `pip install .` from its repository",
            file=sys.stderr,
        )
        return 127
    os.execv(program, [str(program), *args])
    return 0  # not reached: execv replaces the process


if __name__ == "__main__":
    sys.exit(main())
