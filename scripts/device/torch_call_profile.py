#!/usr/bin/env python3
"""Where the host's time of a PyTorch all_reduce goes: torch.profiler's view (the CUDA runtime and driver calls made
inside the call, whichever library makes them) of --calls all_reduces of --bytes each, one process per GPU under
torchrun. Rank 0 prints the table, slowest first. Run it with LD_PRELOAD=.../libpeerlink_nccl.so.2 for peerlink,
without for the real NCCL.

  torchrun --nproc-per-node 2 scripts/device/torch_call_profile.py --bytes 67108864
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bytes", type=int, default=64 << 20)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rows", type=int, default=25)
    args = parser.parse_args()
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    x = torch.ones(args.bytes // 4, device=device)
    for _ in range(10):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    calls = []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as profiler:
        for _ in range(args.calls):
            start = time.perf_counter()
            dist.all_reduce(x)
            calls.append((time.perf_counter() - start) * 1e6)
            torch.cuda.synchronize()
    if dist.get_rank() == 0:
        calls.sort()
        print(f"{args.calls} all_reduces of {args.bytes} B: the call alone median {calls[len(calls) // 2]:.1f} us")
        print(profiler.key_averages().table(sort_by="cpu_time_total", row_limit=args.rows))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
