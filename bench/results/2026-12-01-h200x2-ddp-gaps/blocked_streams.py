"""Does work waiting in other streams slow the GPU's launches on a busy one? One GPU, no library: a sleep kernel
holds the default stream while the host queues --kernels small kernels behind it and then records an event; K other
streams each wait for that event (as a process group's stream waits for the compute stream's gradients) and queue
behind the wait: nothing, one kernel, a second stream's kernel chained on the first (as a library forking its call
onto a copy stream), or a replayed CUDA graph of one kernel or of a copy, a kernel and a copy. The default stream's
time per kernel, median of --rounds, per case, as one line of JSON.

    python3 blocked_streams.py
"""
import argparse
import json
import statistics

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--sleep-cycles", type=int, default=100_000_000)
    args = parser.parse_args()
    x = torch.ones(1024, device="cuda")
    y = torch.ones(1024, device="cuda")
    z = torch.ones(1024, device="cuda")
    # One kernel, and a copy, a kernel and a copy (a staged call's shape), captured as graphs replayed behind a wait.
    side = torch.cuda.Stream()
    one, three = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    with torch.cuda.stream(side):
        y.mul_(1.0)  # warm up outside the capture
        with torch.cuda.graph(one, stream=side):
            y.mul_(1.0)
        with torch.cuda.graph(three, stream=side):
            z.copy_(y)
            z.mul_(1.0)
            y.copy_(z)
    torch.cuda.synchronize()

    def behind(mode, first, second):
        """What a waiting stream queues behind its wait."""
        with torch.cuda.stream(first):
            if mode == "wait only":
                return
            if mode == "graph of 1":
                one.replay()
            elif mode == "graph of 3":
                three.replay()
            else:
                y.mul_(1.0)
        if mode == "chained":  # a second stream waiting for the first, as a library's fork onto a copy stream
            fork = torch.cuda.Event()
            fork.record(first)
            second.wait_event(fork)
            with torch.cuda.stream(second):
                y.mul_(1.0)

    results = {}
    cases = [("kernel", count) for count in (0, 1, 2, 4, 8)] + [
        (mode, count) for mode in ("wait only", "chained", "graph of 1", "graph of 3") for count in (1, 2)]
    for mode, count in cases:
        streams = [(torch.cuda.Stream(), torch.cuda.Stream()) for _ in range(count)]
        times = []
        for _ in range(args.rounds):
            torch.cuda.synchronize()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(args.sleep_cycles)  # the host queues everything below while this runs
            start.record()
            for _ in range(args.kernels):
                x.add_(1.0)
            end.record()
            # Queued while the sleep holds the GPU, so every waiter is blocked through all the kernels above, as
            # DDP's stream is through the backward kernels before a bucket's gradients are ready.
            gate = torch.cuda.Event()
            gate.record()
            for first, second in streams:
                first.wait_event(gate)
                behind(mode, first, second)
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) * 1000.0 / args.kernels)
        results["%s, %d waiting" % (mode, count)] = round(statistics.median(times), 3)
    print(json.dumps({"device": torch.cuda.get_device_name(), "us_per_kernel": results}), flush=True)


if __name__ == "__main__":
    main()
