"""What the package carries beside its Python modules, laid out like an install prefix:
``bin/peerlink`` (the command-line tool, also the doctor's second process) and ``lib/libpeerlink_nccl.so.2``
(NCCL's API over peerlink), each present when the build that made the package had it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

PACKAGE_DIR = Path(__file__).parent
BIN_DIR = PACKAGE_DIR / "bin"
LIB_DIR = PACKAGE_DIR / "lib"
NCCL_LIBRARY_NAME = "libpeerlink_nccl.so.2"


def executable() -> Optional[Path]:
    """The ``peerlink`` program carried by the package; None when this build did not include it."""
    path = BIN_DIR / "peerlink"
    return path if path.is_file() and os.access(path, os.X_OK) else None
