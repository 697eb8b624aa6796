"""Where NCCL's API over peerlink is: ``libpeerlink_nccl.so.2``, whose SONAME is ``libnccl.so.2``.

A pip-installed PyTorch loads its own ``libnccl.so.2`` by absolute path, so the library reaches it only
through ``LD_PRELOAD``::

    LD_PRELOAD=$(python -m peerlink nccl-path) torchrun --nproc-per-node 4 train.py
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from . import _bundle


@dataclass(frozen=True)
class NcclLibrary:
    """The NCCL-API library this package carries: its ``path``, or None and the ``reason``."""

    path: Optional[str]
    reason: str = ""  #: why ``path`` is None; empty when it is set


def find_nccl_library(directory: Union[str, "os.PathLike[str]", None] = None) -> NcclLibrary:
    """``libpeerlink_nccl.so.2`` in ``directory`` (default: the package's ``lib/``), or why it is not there.

    The file is only looked at, never loaded: loading it into a process that already has NCCL would be wrong.
    """
    folder = _bundle.LIB_DIR if directory is None else Path(directory)
    path = folder / _bundle.NCCL_LIBRARY_NAME
    if not path.exists():
        return NcclLibrary(
            None,
            f"{path} does not exist: this peerlink package was built without the NCCL-API library (nccl_api/); "
            "install peerlink from a checkout that has it",
        )
    if not path.is_file():
        return NcclLibrary(None, f"{path} is not a regular file")
    if not os.access(path, os.R_OK):
        return NcclLibrary(None, f"{path} is not readable by this user")
    return NcclLibrary(str(path))


def nccl_library_path() -> Optional[str]:
    """The path of ``libpeerlink_nccl.so.2`` to put in ``LD_PRELOAD``; None when this package has none
    (:func:`find_nccl_library` says why)."""
    return find_nccl_library().path
