"""The GPU's gap between back-to-back small kernels on PyTorch's default stream, with the host far ahead.

Under torchrun, one process per GPU, backend "nccl" (the real NCCL, or peerlink through LD_PRELOAD): a sleep kernel
holds the stream while the host queues `--kernels` small kernels behind it, so the GPU runs them back to back and the
time from the sleep's end to the last one's end, over their count, is the GPU's own cost per kernel (launch
processing, not the host's). Measured before any collective, after a small and a large all-reduce, after calls
on a side stream, and with work queued behind the kernels that waits for them -- a kernel or an all-reduce on a side
stream, asynchronous all-reduces from the compute stream as DDP queues its buckets', among the kernels or behind
them -- each `--rounds` times; rank 0 prints the median per phase as one line of JSON, with the processes holding a
context on each GPU (nvidia-smi).

Written to find why a DDP step's backward kernels stand further apart with peerlink serving the calls than with
NCCL (bench/results/2026-11-30-h200x2-arena-ring/): compare NCCL, peerlink, and peerlink under settings.

    torchrun --nproc-per-node 2 scripts/device/kernel_gaps.py --name nccl
    LD_PRELOAD=$PWD/dist/nccl_api/libpeerlink_nccl.so.2 torchrun --nproc-per-node 2 scripts/device/kernel_gaps.py \\
        --name peerlink
"""
import argparse
import json
import os
import statistics
import subprocess

import torch
import torch.distributed as dist


def per_kernel_us(x, kernels, sleep_cycles, behind=None, among=None, every=40):
    """The GPU's time per kernel of `kernels` queued behind a sleep; behind(), if given, is called once they are
    queued (the GPU still asleep) to queue work that waits for them; among(), if given, after every `every` of
    them (work that waits for the kernels before it, as DDP's bucket all-reduces among the backward kernels)."""
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(sleep_cycles)  # the host queues everything below while this runs
    start.record()
    for k in range(kernels):
        x.add_(1.0)
        if among is not None and k % every == every - 1:
            among()
    end.record()
    if behind is not None:
        behind()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000.0 / kernels


def compute_apps():
    """nvidia-smi's processes with a context per GPU: a process holding one on a GPU other than its own makes the
    GPU share its time between contexts."""
    try:
        listed = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,gpu_bus_id,used_memory",
                                 "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        return [line.strip() for line in listed.stdout.splitlines() if line.strip()]
    except (OSError, subprocess.SubprocessError) as error:
        return ["nvidia-smi: %s" % error]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="run")
    parser.add_argument("--kernels", type=int, default=400)  # more fill the launch queue: the host then paces them
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sleep-cycles", type=int, default=200_000_000)  # ~100 ms at 2 GHz: past the host's queuing
    args = parser.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)) % torch.cuda.device_count())
    x = torch.ones(1024, device="cuda")
    phases = {}

    def measure(phase, behind=None, among=None):
        phases[phase] = statistics.median(
            per_kernel_us(x, args.kernels, args.sleep_cycles, behind, among) for _ in range(args.rounds))

    measure("before any collective")
    small = torch.ones(16, device="cuda")
    dist.all_reduce(small)
    measure("after a 64 B all_reduce")
    large = torch.ones(8 << 20, device="cuda")
    dist.all_reduce(large)
    measure("after a 32 MiB all_reduce")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        for _ in range(5):
            dist.all_reduce(large)
    torch.cuda.synchronize()
    measure("after 5 on a side stream")

    def waiting_all_reduce(tensor):
        # As DDP's bucket all-reduce: queued on a side stream behind an event of the compute stream, so the process
        # group's stream (and whatever the library queues behind it) waits through every kernel measured.
        def queue():
            ready = torch.cuda.Event()
            ready.record()
            side.wait_event(ready)
            with torch.cuda.stream(side):
                dist.all_reduce(tensor)
        return queue

    def waiting_kernel():
        ready = torch.cuda.Event()
        ready.record()
        side.wait_event(ready)
        with torch.cuda.stream(side):
            small.mul_(1.0)

    def queued_all_reduce():
        # DDP's way: an asynchronous call from the compute stream, whose process-group stream waits for it.
        dist.all_reduce(small, async_op=True)

    measure("with a kernel waiting for them", waiting_kernel)
    measure("with an asynchronous 64 B all_reduce queued behind them", queued_all_reduce)
    measure("with an asynchronous 64 B all_reduce queued after every 40 of them", among=queued_all_reduce)
    # As DDP's buckets: a 25 MiB all-reduce of a buffer of its own after every 40 kernels.
    buckets = [torch.ones(25 << 18, device="cuda") for _ in range(10)]
    turn = [0]

    def queued_bucket():
        dist.all_reduce(buckets[turn[0] % len(buckets)], async_op=True)
        turn[0] += 1

    measure("with an asynchronous 25 MiB all_reduce of its own buffer queued after every 40 of them",
            among=queued_bucket)

    def queued_buckets():
        for _ in buckets:
            queued_bucket()

    measure("with ten asynchronous 25 MiB all_reduces of their own buffers queued behind them", queued_buckets)
    measure("with a 32 MiB all_reduce waiting for them", waiting_all_reduce(large))
    measure("with a 16 MiB all_reduce waiting for them", waiting_all_reduce(large[:4 << 20]))
    measure("with a 64 B all_reduce waiting for them", waiting_all_reduce(small))
    if rank == 0:
        print(json.dumps({"name": args.name, "us_per_kernel": phases, "pid": os.getpid(),
                          "compute_apps": compute_apps()}), flush=True)
    dist.barrier()  # every rank alive (its contexts listed) until rank 0 has listed them
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
