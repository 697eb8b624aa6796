#!/usr/bin/env python3
"""PyTorch's torch.distributed (backend nccl) over whatever libnccl.so.2 this process loads: run it plain for
NCCL's figures and under LD_PRELOAD=$(peerlink nccl-path) for peerlink's, then compare the two JSON files with
scripts/device/nccl_api_compare.py.

  torchrun --nproc-per-node 4 scripts/device/nccl_api_torch.py --out nccl.json
  LD_PRELOAD=$(peerlink nccl-path) torchrun --nproc-per-node 4 scripts/device/nccl_api_torch.py --out peerlink.json

Every call is checked against a closed form: all_reduce (sum, avg, max, premul-sum) over float32, bfloat16, float16
and int64 (sum and max), broadcast, reduce, all_gather_into_tensor, reduce_scatter_tensor, all_to_all_single,
send/recv and batch_isend_irecv, barrier, new_group (a split when device_id is given), lazy or eager creation,
all_reduce captured in a CUDA graph; then a few DistributedDataParallel steps of a small transformer with random
weights (nothing downloaded; the same seed in both runs, so the losses can be compared), and timings: all_reduce
latency by size and the DDP step time (medians). Rank 0 writes the JSON; each rank exits non-zero on a wrong
result. NCCL_NVLS_ENABLE=0 (the shared machines' rule) is set if unset.
"""
import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch  # noqa: E402  (after the environment above)
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402


def log(rank, text):
    if rank == 0:
        print(text, flush=True)


def loaded_libraries():
    """The libnccl files this process mapped (which library served the calls)."""
    found = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if "/" in line else ""
            if "nccl" in os.path.basename(path):
                found.add(path)
    return sorted(found)


class Checks:
    def __init__(self, rank):
        self.rank = rank
        self.passed = []
        self.failed = []

    def expect(self, name, got, want, atol=0.0, rtol=0.0):
        want = want.to(got.dtype) if torch.is_tensor(want) else torch.full_like(got, want)
        if got.dtype.is_floating_point:
            ok = torch.allclose(got.float(), want.float(), atol=atol, rtol=rtol)
        else:
            ok = torch.equal(got, want)
        (self.passed if ok else self.failed).append(name)
        if not ok:
            diff = (got.float() - want.float()).abs()
            print(f"[rank {self.rank}] WRONG {name}: max difference {diff.max().item()} "
                  f"(got {got.flatten()[:4].tolist()}, want {want.flatten()[:4].tolist()})", flush=True)


def tolerance(dtype):
    return {torch.float32: 1e-5, torch.bfloat16: 2e-2, torch.float16: 2e-3}.get(dtype, 0.0)


def collectives(rank, world, device, checks, group=None, tag="", global_rank=lambda r: r):
    """`rank` and `world` within `group`; `global_rank` maps a group rank to the default group's (src, dst)."""
    n = world
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.int64):
        for count in (1, 1000, 3 << 20):
            base = torch.arange(count, device=device, dtype=torch.float32) % 7 + 1
            x = (base + rank).to(dtype)
            total = (base * n + n * (n - 1) / 2).to(dtype)
            ops = [("sum", dist.ReduceOp.SUM, total), ("max", dist.ReduceOp.MAX, (base + n - 1).to(dtype))]
            if dtype.is_floating_point:
                ops.append(("avg", dist.ReduceOp.AVG, (total.float() / n).to(dtype)))
                factor = 0.5
                ops.append(("premul_sum", dist._make_nccl_premul_sum(factor), (total.float() * factor).to(dtype)))
            for name, op, want in ops:
                y = x.clone()
                dist.all_reduce(y, op=op, group=group)
                rtol = tolerance(dtype) * (4 if name in ("avg", "premul_sum") else 1)
                checks.expect(f"{tag}all_reduce {name} {dtype} x{count}", y, want, rtol=rtol, atol=rtol)
    count = 100003
    x = torch.full((count,), float(rank + 1), device=device)
    y = x.clone()
    dist.broadcast(y, src=global_rank(n - 1), group=group)
    checks.expect(f"{tag}broadcast", y, float(n))
    y = x.clone()
    dist.reduce(y, dst=global_rank(0), op=dist.ReduceOp.SUM, group=group)
    if rank == 0:
        checks.expect(f"{tag}reduce", y, n * (n + 1) / 2)
    gathered = torch.empty(n * count, device=device)
    dist.all_gather_into_tensor(gathered, x, group=group)
    want = torch.arange(1, n + 1, device=device, dtype=torch.float32).repeat_interleave(count)
    checks.expect(f"{tag}all_gather_into_tensor", gathered, want)
    scattered = torch.empty(count, device=device)
    dist.reduce_scatter_tensor(scattered, torch.arange(n * count, device=device, dtype=torch.float32) % 5, group=group)
    want = (torch.arange(rank * count, (rank + 1) * count, device=device, dtype=torch.float32) % 5) * n
    checks.expect(f"{tag}reduce_scatter_tensor", scattered, want)
    out = torch.empty(n * 1000, device=device)
    dist.all_to_all_single(out, torch.full((n * 1000,), float(rank), device=device), group=group)
    want = torch.arange(n, device=device, dtype=torch.float32).repeat_interleave(1000)
    checks.expect(f"{tag}all_to_all_single", out, want)
    dist.barrier(group=group)


def point_to_point(rank, world, device, checks):
    if world == 1:
        return  # PyTorch refuses a send to the sender's own rank
    n = world
    peer_next, peer_prev = (rank + 1) % n, (rank - 1) % n
    got = torch.empty(4096, device=device)
    if rank % 2 == 0:
        dist.send(torch.full((4096,), float(rank), device=device), peer_next)
        dist.recv(got, peer_prev)
    else:
        dist.recv(got, peer_prev)
        dist.send(torch.full((4096,), float(rank), device=device), peer_next)
    checks.expect("send/recv", got, float(peer_prev))
    outgoing = torch.full((1 << 20,), float(rank), device=device)
    incoming = [torch.empty(1 << 20, device=device) for _ in range(2)]
    ops = [dist.P2POp(dist.isend, outgoing, peer_next), dist.P2POp(dist.isend, outgoing, peer_prev),
           dist.P2POp(dist.irecv, incoming[0], peer_prev), dist.P2POp(dist.irecv, incoming[1], peer_next)]
    for request in dist.batch_isend_irecv(ops):
        request.wait()
    checks.expect("batch_isend_irecv from prev", incoming[0], float(peer_prev))
    checks.expect("batch_isend_irecv from next", incoming[1], float(peer_next))


def captured(rank, world, device, checks):
    x = torch.zeros(1 << 16, device=device)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        dist.all_reduce(x)  # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        dist.all_reduce(x)
    for replay in range(1, 4):
        x.fill_(float(replay * (rank + 1)))
        graph.replay()
        torch.cuda.synchronize()
        checks.expect(f"all_reduce in a CUDA graph, replay {replay}", x, replay * world * (world + 1) / 2)
    del graph  # before the process group goes (a live graph hangs NCCL's own finalize)


class Model(nn.Module):
    def __init__(self, vocab=1024, width=256, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        block = nn.TransformerEncoderLayer(width, nhead=4, dim_feedforward=4 * width, batch_first=True, dropout=0.0)
        self.blocks = nn.TransformerEncoder(block, layers)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        return self.head(self.blocks(self.embed(tokens)))


PHASES = ("forward", "backward", "optimizer", "backward_host")


def ddp_steps(rank, device, steps, width=256, layers=2, profiled=0, batch=8):
    """Losses, step times and phase times of `steps` steps (each of `batch` sequences of 128 tokens), then the GPU
    spans of `profiled` more under torch.profiler (ddp_profile.py; None when 0). A step's phases, in ms: the GPU's
    forward pass (with the loss and zero_grad), its backward pass up to the point where DDP has made the compute
    stream wait for the last bucket's all-reduce, its optimizer step (CUDA events on the compute stream, no
    profiler), and the host's time in loss.backward() (the thread that launches the backward pass also issues the
    buckets' all-reduces)."""
    torch.manual_seed(1234)  # the same weights and data in every run and rank
    model = Model(width=width, layers=layers).to(device)
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[device.index])
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    generator = torch.Generator(device="cpu").manual_seed(99 + rank)

    def step():
        tokens = torch.randint(0, 1024, (batch, 128), generator=generator).to(device)
        marks = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        torch.cuda.synchronize()
        start = time.perf_counter()
        marks[0].record()
        logits = ddp(tokens[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad()
        marks[1].record()
        backward_start = time.perf_counter()
        loss.backward()
        backward_host = time.perf_counter() - backward_start
        marks[2].record()
        optimizer.step()
        marks[3].record()
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        phases = [marks[i].elapsed_time(marks[i + 1]) for i in range(3)] + [backward_host * 1e3]
        return loss, seconds, phases

    losses, times, phase_times = [], [], []
    for _ in range(steps):
        loss, seconds, phases = step()
        times.append(seconds)
        phase_times.append(phases)
        summed = loss.detach().clone()
        dist.all_reduce(summed)
        losses.append(summed.item() / dist.get_world_size())
    spans = None
    if profiled > 0:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import ddp_profile  # beside this script
        spans = ddp_profile.profile_steps(step, profiled)
    return losses, times, phase_times, spans


def latency(device, sizes, iterations=200):
    """Median microseconds of one all_reduce from Python, per size in bytes: until it completed, and of the call
    alone (the host's part: PyTorch's and the library's)."""
    completed = {}
    called = {}
    for size in sizes:
        x = torch.ones(max(size // 4, 1), device=device)
        for _ in range(20):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        samples = []
        calls = []
        for _ in range(iterations):
            start = time.perf_counter()
            dist.all_reduce(x)
            returned = time.perf_counter()
            torch.cuda.synchronize()
            samples.append((time.perf_counter() - start) * 1e6)
            calls.append((returned - start) * 1e6)
        completed[str(size)] = statistics.median(samples)
        called[str(size)] = statistics.median(calls)
    return completed, called


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the JSON rank 0 writes")
    parser.add_argument("--init", choices=("eager", "lazy"), default="eager",
                        help="eager: init_process_group(device_id=...) creates the communicator at once (and "
                             "new_group splits it); lazy: created at the first collective")
    parser.add_argument("--steps", type=int, default=20, help="DistributedDataParallel steps")
    parser.add_argument("--model-width", type=int, default=256,
                        help="the transformer's width (its gradients: about 12 x width^2 x layers floats)")
    parser.add_argument("--model-layers", type=int, default=2, help="the transformer's layers")
    parser.add_argument("--batch", type=int, default=8,
                        help="sequences of 128 tokens a DDP step: more makes the step's GPU work longer beside the "
                             "same gradients (the default's backward pass is paced by the host's kernel launches)")
    parser.add_argument("--profile-steps", type=int, default=0,
                        help="after the timed steps, this many more under torch.profiler: where each step's GPU time "
                             "went (ddp_profile.py), in the JSON as ddp_profile")
    parser.add_argument("--only-ddp", action="store_true",
                        help="the DistributedDataParallel steps alone (no checks, no latencies): for timing them")
    parser.add_argument("--expect-library", default="",
                        help="fail unless a mapped libnccl's file name contains this (e.g. peerlink)")
    args = parser.parse_args()

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    # Ranks share GPUs when there are more than GPUs (peerlink allows it; NCCL refuses two ranks on one GPU).
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
    torch.cuda.set_device(device)
    started = time.perf_counter()
    if args.init == "eager":
        dist.init_process_group("nccl", device_id=device)
    else:
        dist.init_process_group("nccl")
    checks = Checks(rank)
    latencies, call_times = {}, {}
    if not args.only_ddp:
        collectives(rank, world, device, checks)
    created = time.perf_counter() - started
    if not args.only_ddp:
        point_to_point(rank, world, device, checks)
        evens = dist.new_group([r for r in range(world) if r % 2 == 0])
        if rank % 2 == 0:
            collectives(rank // 2, (world + 1) // 2, device, checks, group=evens, tag="new_group ",
                        global_rank=lambda r: 2 * r)
        captured(rank, world, device, checks)
    losses, step_times, phase_times, spans = ddp_steps(rank, device, args.steps, args.model_width,
                                                       args.model_layers, args.profile_steps, args.batch)
    if not args.only_ddp:
        latencies, call_times = latency(device, [8, 1 << 10, 1 << 16, 1 << 20, 16 << 20, 64 << 20])
    libraries = loaded_libraries()
    if args.expect_library and not any(args.expect_library in os.path.basename(p) for p in libraries):
        checks.failed.append(f"no mapped libnccl named *{args.expect_library}* (mapped: {libraries})")
    failed = [None] * world
    dist.all_gather_object(failed, checks.failed)
    if rank == 0:
        report = {
            "torch": torch.__version__,
            "nccl_version": ".".join(str(v) for v in torch.cuda.nccl.version()),
            "libraries": libraries,
            "world": world,
            "init": args.init,
            "first_collectives_s": created,
            "checks_passed": len(checks.passed),
            "checks_failed": {str(r): f for r, f in enumerate(failed) if f},
            "ddp_losses": losses,
            "ddp_step_ms_median": statistics.median(step_times[2:]) * 1e3 if len(step_times) > 2 else None,
            "ddp_step_ms": [t * 1e3 for t in step_times],
            "ddp_phase_ms_median": {name: statistics.median(p[i] for p in phase_times[2:])
                                    for i, name in enumerate(PHASES)} if len(phase_times) > 2 else None,
            "ddp_profile": spans,
            "all_reduce_us_median": latencies,
            "all_reduce_call_us_median": call_times,
        }
        with open(args.out, "w") as out:
            json.dump(report, out, indent=1)
        log(rank, f"{len(checks.passed)} checks passed on rank 0; failures: {report['checks_failed'] or 'none'}")
        log(rank, f"libraries: {libraries}; DDP losses {losses[0]:.4f} .. {losses[-1]:.4f}; "
                  f"step {report['ddp_step_ms_median']:.2f} ms; all_reduce us {latencies}")
        if spans and spans["median"]:
            log(rank, "profiled steps, median us: " +
                ", ".join(f"{key} {value:.0f}" for key, value in spans["median"].items()))
    dist.destroy_process_group()
    return 1 if any(failed) else 0


if __name__ == "__main__":
    sys.exit(main())
