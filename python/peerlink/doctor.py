"""Does P2P between these GPUs really work? peerlink's doctor verdicts, for frameworks.

:func:`verify_peers` is ``peerlink::verifyPeers`` (``include/peerlink/doctor.hpp``) with the options of
``peerlink doctor``: data moved between every directed pair of GPUs by the copy engine and by SM kernels, a flag
handshake, and (with the ``peerlink`` program this package carries) IPC and cuMem sharing with a second process,
each checked on the GPU that owns the memory. Verdicts are cached per boot, driver, kernel command line and pair,
so every start-up after the first answers in milliseconds, and ``peerlink doctor`` and this function share the
cache. :func:`cached_verdicts` reads that cache without probing anything.
"""

from __future__ import annotations

import enum
import operator
from dataclasses import dataclass, field
from typing import Iterable, Optional, Tuple

from . import _bundle, _native
from ._records import from_dict
from .errors import InvalidUsageError
from .topology import Topology

#: The deadline of every wait of the probe unless told otherwise, as ``peerlink doctor --timeout-ms``.
DEFAULT_TIMEOUT_MS = 2000
_MAX_TIMEOUT_MS = 3_600_000


class Verdict(str, enum.Enum):
    """How a directed pair (or the platform) fares, best first (``docs/doctor-verdicts.md``)."""

    OK = "OK"  #: every probe moved correct data (at the expected speed, when measured)
    DEGRADED = "DEGRADED"  #: works, but slower than it should or with a caveat
    BROKEN = "BROKEN"  #: wrong data, a hang caught by a deadline, or a probe that could not run
    UNSUPPORTED = "UNSUPPORTED"  #: CUDA offers no P2P on this pair (not an error: traffic goes through the host)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Finding:
    """Something the doctor found: a stable code, what it means, and the fix (``docs/doctor.md``)."""

    code: str  #: stable snake_case, e.g. "acs_redirect", "ce_write_dropped"
    severity: Verdict
    summary: str  #: one line naming the devices
    fix: str  #: one line: what to do about it
    gpus: Tuple[int, ...] = ()  #: CUDA ordinals concerned; empty for the whole platform


@dataclass(frozen=True)
class PairVerdict:
    """The verdict of traffic from GPU ``src`` to GPU ``dst`` (CUDA ordinals) and the findings behind it."""

    src: int
    dst: int
    verdict: Verdict
    reasons: Tuple[str, ...] = ()  #: finding codes, most severe first

    @property
    def usable(self) -> bool:
        """P2P works on this pair: OK, or DEGRADED (works, slower or with a caveat)."""
        return self.verdict in (Verdict.OK, Verdict.DEGRADED)


@dataclass(frozen=True)
class ProbeResult:
    """What one probe method saw on one directed pair in this call (pairs answered from the cache have none)."""

    src: int
    dst: int
    method: str  #: "ce_write", "ce_read", "sm_write", "sm_read", "flag_handshake", "ipc", "cumem"
    ran: bool
    timed_out: bool = False
    wrong_bytes: int = 0
    lost_bytes: int = 0  #: of the wrong bytes, those that never landed (the ACS/IOMMU signature)
    gbps: float = 0.0  #: measured bandwidth; 0 when not measured (quick)
    error: str = ""
    error_cause: str = ""
    seconds: float = 0.0


class _Verdicts:
    """Lookups shared by results that hold pair verdicts."""

    pairs: Tuple[PairVerdict, ...]

    def verdict(self, src: int, dst: int) -> Optional[PairVerdict]:
        """The verdict of ``src`` -> ``dst``; None when the result has none for it."""
        for pair in self.pairs:
            if pair.src == src and pair.dst == dst:
                return pair
        return None

    def usable(self, src: int, dst: int) -> bool:
        """P2P from ``src`` to ``dst`` works (OK or DEGRADED); a GPU with itself always does."""
        if src == dst:
            return True
        pair = self.verdict(src, dst)
        return pair is not None and pair.usable


@dataclass(frozen=True)
class VerifyResult(_Verdicts):
    """What :func:`verify_peers` concluded, with what it was based on."""

    overall: Verdict  #: the worst pair verdict (UNSUPPORTED pairs count as OK)
    pairs: Tuple[PairVerdict, ...]  #: every directed pair of the GPUs asked about
    findings: Tuple[Finding, ...]  #: platform and per-pair findings, most severe first
    probes: Tuple[ProbeResult, ...]
    topology: Topology = field(repr=False)
    cached_pairs: int = 0  #: pairs whose verdict came from the cache
    cache_directory: str = ""  #: where the cache is; empty when it is off or has no home
    seconds: float = 0.0  #: wall time of the call

    @property
    def ok(self) -> bool:
        """Every pair is OK or UNSUPPORTED (nothing slower than it should be, nothing broken)."""
        return self.overall == Verdict.OK


@dataclass(frozen=True)
class CachedVerdicts(_Verdicts):
    """The verdicts the doctor's cache holds for a topology's pairs (:func:`cached_verdicts`)."""

    pairs: Tuple[PairVerdict, ...]  #: the directed pairs found; others have no verdict
    topology: Topology = field(repr=False)
    directory: str = ""  #: the cache folder read; empty when none could be
    absence: str = ""  #: when no pair was found: why (the cache is off, has no folder, holds none)


def _devices(devices: Optional[Iterable[int]]) -> list:
    if devices is None:
        return []
    if isinstance(devices, (str, bytes)):
        raise InvalidUsageError(f"devices={devices!r}: give CUDA ordinals as integers, e.g. devices=[0, 1]")
    try:
        chosen = [operator.index(device) for device in devices]
    except TypeError:
        raise InvalidUsageError(f"devices={devices!r}: give CUDA ordinals as integers, e.g. devices=[0, 1]") from None
    if not chosen:
        raise InvalidUsageError("devices=[]: name at least one GPU, or None for every GPU")
    return chosen


def verify_peers(
    devices: Optional[Iterable[int]] = None,
    quick: bool = True,
    *,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    use_cache: bool = True,
    cross_process: bool = True,
    helper_visible_devices: Optional[str] = None,
) -> VerifyResult:
    """A functional verdict for every directed pair of ``devices`` (CUDA ordinals; None: every GPU).

    ``quick`` (the default, for start-up) moves 1 MiB per method and pair and skips the platform checks and the
    bandwidth; ``quick=False`` is ``peerlink doctor``'s full run. ``timeout_ms`` bounds every wait of the probe,
    so a dropped write costs that long and never hangs. ``use_cache=False`` probes again and leaves the cache
    alone (``peerlink doctor --no-cache``). ``cross_process`` also probes IPC and cuMem sharing with a second
    process, the ``peerlink`` program carried by this package (without it the result's findings say
    ``cross_process_not_probed``); ``helper_visible_devices`` is that process's CUDA_VISIBLE_DEVICES, for
    launchers that give each process only some GPUs.

    Raises :class:`peerlink.NoDeviceError` where CUDA finds no GPU, :class:`peerlink.InvalidUsageError` for a
    GPU that does not exist or is named twice. A probe that could not run is never OK (fails closed).
    ``PEERLINK_TOPO_FILE`` replaces this machine by a saved topology: nothing is probed then, so no pair with
    P2P is OK.
    """
    if not isinstance(timeout_ms, int) or isinstance(timeout_ms, bool) or not 1 <= timeout_ms <= _MAX_TIMEOUT_MS:
        raise InvalidUsageError(f"timeout_ms={timeout_ms!r}: give an integer in 1..{_MAX_TIMEOUT_MS} (milliseconds)")
    helper = _bundle.executable() if cross_process else None
    raw = _native.verify_peers(
        _devices(devices),
        bool(quick),
        timeout_ms,
        bool(use_cache),
        str(helper) if helper is not None else "",
        helper_visible_devices,
    )
    return from_dict(VerifyResult, {**raw, "topology": Topology.from_json(raw["topology_json"])})


def cached_verdicts(topology: Optional[Topology] = None) -> CachedVerdicts:
    """The last verdicts ``peerlink doctor`` or :func:`verify_peers` cached for ``topology``'s pairs (None: this
    machine's) under this boot, driver and kernel command line, whatever options made them. Never probes and
    never fails for a cache that is missing or foreign: ``absence`` then says why nothing was found.
    """
    raw = _native.cached_verdicts(None if topology is None else topology.to_json())
    return from_dict(CachedVerdicts, {**raw, "topology": Topology.from_json(raw["topology_json"])})
