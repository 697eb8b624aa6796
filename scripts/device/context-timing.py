#!/usr/bin/env python3
"""What a fresh process pays before any communicator exists: the CUDA driver's cuInit and its primary
contexts (one after another, and one thread per GPU), and NCCL's ncclCommInitAll on the same GPUs in a fresh
process (contexts included) and after the contexts exist. Each measurement runs in its own process
(`context-timing.py MODE`); without a mode every mode runs REPEAT times (default 2) and the medians print.
Needs only libcuda and, for the NCCL modes, PEERLINK_NCCL_LIBRARY (or PyTorch's nvidia.nccl package). The
nccl-fresh mode touches the driver only through NCCL, so it takes the GPU count from CONTEXT_TIMING_GPUS
(default 4).
Development aid for the creation target (docs/performance.md); peerlink's own figure is the
Communicator.CreatesOnEveryGpuAndReportsCreationTime GPU test."""
import ctypes
import json
import os
import statistics
import subprocess
import sys
import threading
import time

MODES = ["init", "contexts-serial", "contexts-parallel", "nccl-fresh", "nccl-after-contexts"]


def ms_since(start):
    return (time.perf_counter() - start) * 1000.0


def check(result, what):
    if result != 0:
        raise SystemExit(f"{what} failed: {result}")


def load_nccl():
    path = os.environ.get("PEERLINK_NCCL_LIBRARY")
    if not path:
        import nvidia.nccl  # noqa: PLC0415 (only where NCCL is PyTorch's)
        path = os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2")
    return ctypes.CDLL(path)


def retain_contexts(cuda, count, parallel):
    """Retains (creates) each GPU's primary context; returns the milliseconds each took."""
    times = [0.0] * count

    def retain(ordinal):
        device = ctypes.c_int()
        check(cuda.cuDeviceGet(ctypes.byref(device), ordinal), "cuDeviceGet")
        context = ctypes.c_void_p()
        start = time.perf_counter()
        check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
        times[ordinal] = ms_since(start)

    if parallel:
        threads = [threading.Thread(target=retain, args=(i,)) for i in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:
        for i in range(count):
            retain(i)
    return times


def run_mode(mode):
    cuda = ctypes.CDLL("libcuda.so.1")
    start = time.perf_counter()
    result = {"mode": mode}
    if mode != "nccl-fresh":
        check(cuda.cuInit(0), "cuInit")
        result["init_ms"] = ms_since(start)
    count = ctypes.c_int()
    if mode == "nccl-fresh":
        # NCCL initializes the driver itself; count the GPUs through it afterwards.
        nccl = load_nccl()
        count_env = int(os.environ.get("CONTEXT_TIMING_GPUS", "0"))
        gpus = count_env if count_env > 0 else 4
        comms = (ctypes.c_void_p * gpus)()
        start = time.perf_counter()
        check(nccl.ncclCommInitAll(comms, gpus, None), "ncclCommInitAll")
        result["nccl_ms"] = ms_since(start)
        result["gpus"] = gpus
        return result
    check(cuda.cuDeviceGetCount(ctypes.byref(count)), "cuDeviceGetCount")
    gpus = count.value
    result["gpus"] = gpus
    if mode == "init":
        return result
    start = time.perf_counter()
    per_gpu = retain_contexts(cuda, gpus, parallel=(mode != "contexts-serial"))
    result["contexts_ms"] = ms_since(start)
    result["per_gpu_ms"] = [round(t, 1) for t in per_gpu]
    if mode == "nccl-after-contexts":
        nccl = load_nccl()
        comms = (ctypes.c_void_p * gpus)()
        start = time.perf_counter()
        check(nccl.ncclCommInitAll(comms, gpus, None), "ncclCommInitAll")
        result["nccl_ms"] = ms_since(start)
    return result


def main():
    if len(sys.argv) > 1:
        print(json.dumps(run_mode(sys.argv[1])))
        return
    repeat = int(os.environ.get("REPEAT", "2"))
    runs = {}
    for _ in range(repeat):
        for mode in MODES:
            out = subprocess.run([sys.executable, __file__, mode], capture_output=True, text=True, timeout=120)
            if out.returncode != 0:
                print(f"{mode}: exit {out.returncode}: {out.stderr.strip()[-300:]}")
                continue
            line = out.stdout.strip().splitlines()[-1]
            print(line)
            runs.setdefault(mode, []).append(json.loads(line))
    for mode, results in runs.items():
        keys = [k for k in ("init_ms", "contexts_ms", "nccl_ms") if k in results[0]]
        medians = ", ".join(f"{k} {statistics.median(r[k] for r in results):.1f}" for k in keys)
        print(f"median of {len(results)}: {mode}: {medians}")


if __name__ == "__main__":
    main()
