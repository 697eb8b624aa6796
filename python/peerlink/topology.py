"""The GPU topology as data: what peerlink knows about every GPU of this process and every ordered pair.

The classes mirror the topology JSON field by field (``docs/topology-format.md`` has each field's meaning,
unit and "unknown" value); :meth:`Topology.to_json` gives the JSON itself, which ``peerlink topo --topo-file``
and ``PEERLINK_TOPO_FILE`` read back.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Optional, Tuple, Union

from . import _native
from ._records import from_dict


@dataclass(frozen=True)
class PcieLink:
    """A GPU's PCIe link: generation and lanes, current and maximum; 0 where unknown."""

    gen: int = 0
    width: int = 0
    max_gen: int = 0
    max_width: int = 0


@dataclass(frozen=True)
class NvlinkInfo:
    """A GPU's NVLinks (from NVML)."""

    version: int = 0  #: NVLink generation (4 on Hopper); 0 = unknown or none
    active_links: int = 0
    switch_links: int = 0  #: of the active links, those that end at an NVSwitch
    link_rate_gbps: float = 0.0  #: one link, one direction, GB/s


@dataclass(frozen=True)
class MemoryHandles:
    """The kinds of memory handle the GPU's driver can share across processes."""

    vmm: bool = False
    posix_fd: bool = False  #: what the CUMEM route needs
    fabric: bool = False


@dataclass(frozen=True)
class FailedReadings:
    """Readings of one GPU that failed, each with its reason (None: read): the facts it would have given are
    unknown, not zero (the doctor says which shortage of the process explains them)."""

    nvlink: Optional[str] = None
    numa: Optional[str] = None
    pcie_link: Optional[str] = None
    pci_path: Optional[str] = None


@dataclass(frozen=True)
class Gpu:
    """One GPU as this process sees it; ``uuid`` and ``pci_bus_id`` identify it, ``cuda_ordinal`` is a view."""

    cuda_ordinal: int
    uuid: str
    pci_bus_id: str
    name: str
    nvml_index: int = -1
    compute_capability: str = "0.0"
    sm_count: int = 0
    memory_bytes: int = 0
    numa_node: int = -1
    cpu_affinity: str = ""
    pcie: PcieLink = field(default_factory=PcieLink)
    nvlink: NvlinkInfo = field(default_factory=NvlinkInfo)
    mig_mode: int = -1
    bar1_bytes: int = 0
    memory_handles: MemoryHandles = field(default_factory=MemoryHandles)
    pci_path: Tuple[str, ...] = ()
    failed_readings: Optional[FailedReadings] = None  #: only where a reading failed


@dataclass(frozen=True)
class P2pAttributes:
    """What ``cudaDeviceGetP2PAttribute`` reports for an ordered pair."""

    access_supported: bool = False
    native_atomics: bool = False
    cuda_array_access: bool = False
    performance_rank: int = -1


@dataclass(frozen=True)
class GpuPair:
    """Traffic from GPU ``src`` to GPU ``dst`` (indices into :attr:`Topology.gpus`)."""

    src: int
    dst: int
    can_access_peer: bool = False  #: CUDA says src may map dst's memory (what peerlink's doctor then verifies)
    p2p: P2pAttributes = field(default_factory=P2pAttributes)
    nvlinks: int = 0
    via_nvswitch: bool = False
    path: str = "SYS"  #: NCCL's path class: LOC, NVL, NVB, PIX, PXB, PHB, NODE, SYS
    expected_gbps: float = 0.0  #: the link model's bandwidth, one direction; 0 = unknown
    bandwidth_basis: str = ""

    @property
    def link(self) -> str:
        """The pair's link as ``nvidia-smi topo -m`` writes it: ``NV18`` for 18 NVLinks, else the path class."""
        return f"NV{self.nvlinks}" if self.path == "NVL" and self.nvlinks > 0 else self.path


@dataclass(frozen=True)
class NvmlGpu:
    """A GPU NVML sees, whether or not CUDA_VISIBLE_DEVICES lets this process's CUDA see it."""

    index: int = -1
    uuid: str = ""
    pci_bus_id: str = ""


@dataclass(frozen=True)
class Topology:
    """Every GPU this process sees (in CUDA ordinal order) and every ordered pair of them."""

    gpus: Tuple[Gpu, ...]
    pairs: Tuple[GpuPair, ...]
    source: str = ""  #: "discovered", or the file it was read from
    host: str = ""
    driver_version: str = ""
    cuda_driver_version: int = 0
    cuda_runtime_version: int = 0
    cuda_visible_devices: Optional[str] = None
    cuda_device_order: Optional[str] = None
    nvml_gpus: Tuple[NvmlGpu, ...] = ()
    notes: Tuple[str, ...] = ()  #: what discovery could not learn, and why
    json_text: str = field(default="", repr=False, compare=False)

    def pair(self, src: int, dst: int) -> GpuPair:
        """The pair ``src`` -> ``dst``; ``KeyError`` when the topology has no such pair (or src == dst)."""
        count = len(self.gpus)
        # The library writes pairs in (src, dst) order without the diagonal: src -> dst is at this index.
        index = src * (count - 1) + (dst if dst < src else dst - 1)
        if 0 <= src < count and 0 <= dst < count and src != dst and index < len(self.pairs):
            candidate = self.pairs[index]
            if (candidate.src, candidate.dst) == (src, dst):
                return candidate
        for candidate in self.pairs:
            if (candidate.src, candidate.dst) == (src, dst):
                return candidate
        raise KeyError(f"the topology has no pair {src} -> {dst} ({count} GPUs, 0..{count - 1})")

    def to_json(self) -> str:
        """The topology as peerlink's JSON (``docs/topology-format.md``), as the library wrote it."""
        return self.json_text

    @classmethod
    def from_json(cls, text: str) -> Topology:
        """A topology from the library's JSON text (for files, :func:`topology` with a path checks them)."""
        return from_dict(cls, {**json.loads(text), "json_text": text})


def topology(path: Union[str, "os.PathLike[str]", None] = None) -> Topology:
    """The topology of this machine's GPUs, or of a saved topology file.

    Without ``path`` peerlink discovers the GPUs this process sees (CUDA, NVML and sysfs), unless
    ``PEERLINK_TOPO_FILE`` names a file to read instead. Raises :class:`peerlink.NoDeviceError` where CUDA finds
    no GPU, :class:`peerlink.InvalidInputError` for a file that is missing or malformed (naming the field).
    """
    text = _native.topology_json(None if path is None else os.fspath(path))
    return Topology.from_json(text)
