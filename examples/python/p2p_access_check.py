"""A framework's "does P2P between these GPUs really work?" check, answered by peerlink.

vLLM decides whether its custom all-reduce may use P2P with ``gpu_p2p_access_check(src, tgt)``
(vllm/distributed/device_communicators/custom_all_reduce_utils.py). Because ``cudaDeviceCanAccessPeer`` can
say yes where the platform drops peer writes, it checks by hand: local rank 0 starts a helper program that spawns
two processes per batch, shares a 1 KiB buffer between them with CUDA IPC, memsets it from one side and reads it
from the other, for every pair; the booleans go into a JSON file named after CUDA_VISIBLE_DEVICES, and the other
ranks wait at a barrier and read the file.

``gpu_p2p_access_check`` below has the same signature and meaning and needs none of that machinery: peerlink's
doctor moves data between every directed pair by the copy engine and by kernels (writing and reading), through a
flag handshake and through IPC and cuMem sharing with a second process, checks every byte on the GPU that owns the
memory, bounds every wait by a deadline, and caches the verdicts per boot, driver and kernel command line (the
GPUs named by bus id, so any CUDA_VISIBLE_DEVICES finds them). A pair that fails says why and what to do.

Run it to see this machine's answer (exit 0 when no pair is BROKEN, 1 when one is, 3 without a GPU):

    python examples/python/p2p_access_check.py

or a saved topology's, without a GPU (nothing is probed there, so every pair with P2P fails closed):

    PEERLINK_TOPO_FILE=examples/topologies/h200x4_vm.json python examples/python/p2p_access_check.py
"""

import functools
import os
import sys

import peerlink


@functools.lru_cache(maxsize=None)
def _verdicts() -> peerlink.VerifyResult:
    """This node's verdicts, probed by one process. Under torch.distributed, local rank 0 probes first and fills
    the cache; the others then find every pair there (they probe only where the cache is off or unwritable)."""
    dist = sys.modules.get("torch.distributed")  # only if the framework already uses it
    if dist is not None and dist.is_available() and dist.is_initialized():
        first = int(os.environ.get("LOCAL_RANK", "0")) == 0
        result = peerlink.verify_peers() if first else None
        dist.barrier()
        return result if first else peerlink.verify_peers()
    return peerlink.verify_peers()


def gpu_p2p_access_check(src: int, tgt: int) -> bool:
    """Whether GPU ``src`` can access GPU ``tgt`` (CUDA ordinals): data moved between them arrived intact (the
    doctor's verdict is OK, or DEGRADED: working, but slower than the links promise or with a caveat)."""
    return _verdicts().usable(src, tgt)


def main() -> int:
    try:
        result = _verdicts()
    except peerlink.NoDeviceError as error:
        print(f"p2p_access_check: {error}", file=sys.stderr)
        return 3
    for pair in result.pairs:
        reasons = f": {', '.join(pair.reasons)}" if pair.reasons else ""
        print(f"GPU {pair.src} -> GPU {pair.dst}: {gpu_p2p_access_check(pair.src, pair.dst)} ({pair.verdict}{reasons})")
    seen = set()
    for finding in result.findings:  # most severe first; one line per kind of finding
        if finding.code not in seen:
            seen.add(finding.code)
            label = "NOTE" if finding.severity == peerlink.Verdict.OK else finding.severity
            print(f"{label} {finding.code}: {finding.fix}")
    print(f"{len(result.pairs)} pair(s) in {result.seconds:.2f} s, {result.cached_pairs} from the cache")
    return 1 if result.overall == peerlink.Verdict.BROKEN else 0


if __name__ == "__main__":
    sys.exit(main())
