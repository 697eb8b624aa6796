"""peerlink for Python: does P2P between these GPUs really work, how are they linked, and where is NCCL's API
over peerlink (``docs/python.md``)::

    import peerlink
    result = peerlink.verify_peers()      # every pair of the visible GPUs, probed once per boot, then cached
    result.usable(0, 1)                   # True when P2P from GPU 0 to GPU 1 works
    peerlink.topology().pair(0, 1).link   # "NV18", "PIX", ...
    peerlink.nccl_library_path()          # for LD_PRELOAD, or None

Importing needs no GPU: CUDA's runtime is linked into the module and the driver and NVML are loaded when first
used, so a machine without a GPU gets :class:`NoDeviceError` from the calls that need one.
"""

from . import _native
from .doctor import (
    DEFAULT_TIMEOUT_MS,
    CachedVerdicts,
    Finding,
    PairVerdict,
    ProbeResult,
    Verdict,
    VerifyResult,
    cached_verdicts,
    verify_peers,
)
from .errors import (
    CudaError,
    DataMismatchError,
    Error,
    ErrorCode,
    InternalError,
    InvalidInputError,
    InvalidUsageError,
    NoDeviceError,
    NvmlError,
    RemoteError,
    SystemCallError,
    TimeoutError,
    UnsupportedError,
)
from .nccl import NcclLibrary, find_nccl_library, nccl_library_path
from .topology import (
    FailedReadings,
    Gpu,
    GpuPair,
    MemoryHandles,
    NvlinkInfo,
    NvmlGpu,
    P2pAttributes,
    PcieLink,
    Topology,
    topology,
)

__version__: str = _native.version
#: The git commit the native module was built from ("-dirty" with local changes, "unknown" outside git).
git_commit: str = _native.git_commit

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "CachedVerdicts",
    "CudaError",
    "DataMismatchError",
    "Error",
    "ErrorCode",
    "Finding",
    "FailedReadings",
    "Gpu",
    "GpuPair",
    "InternalError",
    "InvalidInputError",
    "InvalidUsageError",
    "MemoryHandles",
    "NcclLibrary",
    "NoDeviceError",
    "NvlinkInfo",
    "NvmlError",
    "NvmlGpu",
    "P2pAttributes",
    "PairVerdict",
    "PcieLink",
    "ProbeResult",
    "RemoteError",
    "SystemCallError",
    "TimeoutError",
    "Topology",
    "UnsupportedError",
    "Verdict",
    "VerifyResult",
    "cached_verdicts",
    "find_nccl_library",
    "git_commit",
    "nccl_library_path",
    "topology",
    "verify_peers",
]
