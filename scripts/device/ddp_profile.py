#!/usr/bin/env python3
"""Where a DistributedDataParallel step's GPU time goes, from a torch.profiler trace: per step, how long the GPU
worked on it (first to last operation), how long the compute stream was busy and idle in that span, how long the
communication streams (every other stream: the process group's, and the library's own copy streams) were busy, and
how much of their work no compute overlapped. Which library ran the communication does not matter here: the
comparison of NCCL's steps with peerlink's is of these spans.

nccl_api_torch.py --profile-steps N runs N more steps under the profiler and calls profile_steps; analyse() and
backward_gaps() are pure (tests/scripts/test_ddp_profile.py). Times in microseconds. Run as a program over saved
runs' JSON (nccl_api_torch.py --out, with --profile-steps), it prints each run's backward gaps:

  python3 scripts/device/ddp_profile.py gaps /tmp/call-nccl-api-ddp/ddp-*.json
"""
import json
import os
import statistics
import sys
import tempfile

GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
LAUNCH_CATEGORIES = ("cuda_runtime", "cuda_driver")
STEP_NAME = "ddp_step"
SYNC_CATEGORY = "cuda_sync"  # the profiler's stream waits and syncs, with the streams (enable_cuda_sync_events)
COLLECTIVE_PREFIX = "nccl:"  # c10d's CPU annotation of each collective call ("nccl:all_reduce", ...)


def union_length(intervals):
    """Total length covered by (start, end) intervals."""
    total = 0.0
    reach = None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def intersection_length(a, b):
    """Length covered by both sets of (start, end) intervals."""
    return union_length(a) + union_length(b) - union_length(list(a) + list(b))


def analyse(events, step_name=STEP_NAME, timeline_steps=2):
    """Per-step spans from chrome-trace events: the CPU annotations named step_name (each step's work synchronized
    inside it) and the GPU operations (kernels, copies, sets) within each. The compute stream is the one with the
    most kernels over the whole trace (not the most kernel time: a communication kernel that waits for its peers
    may outlast the backward pass's hundreds of short ones). Returns {"steps": [...], "median": {...},
    "comm_ops": {name: us per step}, "timeline": [...]}: the last `timeline_steps` steps' GPU operations, [step,
    "compute" or "comm", stream, start and duration in us from the step's first operation, name, launch lead],
    to study offline.

    The launch lead of a GPU operation is how long it waited in its stream after the host's launch call returned
    (start minus the end of the runtime or driver call of the same correlation id; None without one): a lead near
    zero means the host paced that kernel, a long one that the GPU was behind. Per step, "launch_lead_us" is the
    compute stream's median lead and "collective_calls_us" the host's time inside the collective calls
    (COLLECTIVE_PREFIX annotations), which the thread launching the backward pass spends there. Over the steps:
    "runtime_calls", the CUDA runtime and driver calls per step by name, and "sync_ops", the stream waits and
    syncs per step by kind and streams (work queued behind an unmet wait in other streams can slow every launch on
    a busy one: bench/results/2026-12-01-h200x2-ddp-gaps/)."""
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                   if e.get("ph") == "X" and e.get("name") == step_name and e.get("cat") == "user_annotation")
    gpu = [e for e in events if e.get("ph") == "X" and e.get("cat") in GPU_CATEGORIES and "dur" in e]
    kernels = {}
    for e in gpu:
        if e["cat"] == "kernel":
            stream = e.get("args", {}).get("stream")
            kernels[stream] = kernels.get(stream, 0) + 1
    if not steps or not kernels:
        return {"steps": [], "median": {}, "comm_ops": {}, "timeline": []}
    compute = max(kernels, key=kernels.get)
    launched = {e["args"]["correlation"]: e["ts"] + e["dur"] for e in events
                if e.get("ph") == "X" and e.get("cat") in LAUNCH_CATEGORIES and "dur" in e
                and "correlation" in e.get("args", {})}

    def lead(e):
        end = launched.get(e.get("args", {}).get("correlation"))
        return None if end is None else round(e["ts"] - end, 1)

    calls = [(e["ts"], e["dur"]) for e in events
             if e.get("ph") == "X" and e.get("name", "").startswith(COLLECTIVE_PREFIX) and "dur" in e]
    runtime = [e for e in events if e.get("ph") == "X" and e.get("cat") in LAUNCH_CATEGORIES and "dur" in e]
    syncs = [e for e in events if e.get("cat") == SYNC_CATEGORY and "ts" in e]
    runtime_calls = {}
    sync_ops = {}
    rows = []
    comm_ops = {}
    timeline = []
    for index, (begin, end) in enumerate(steps):
        inside = [e for e in gpu if begin <= e["ts"] and e["ts"] + e["dur"] <= end]
        if not inside:
            continue
        first = min(e["ts"] for e in inside)
        if index >= len(steps) - timeline_steps:
            for e in sorted(inside, key=lambda e: e["ts"]):
                stream = e.get("args", {}).get("stream")
                timeline.append([index, "compute" if stream == compute else "comm", stream,
                                 round(e["ts"] - first, 1), round(e["dur"], 1), e["name"][:80], lead(e)])
        last = max(e["ts"] + e["dur"] for e in inside)
        on_compute = [(e["ts"], e["ts"] + e["dur"]) for e in inside if e.get("args", {}).get("stream") == compute]
        on_comm = [(e["ts"], e["ts"] + e["dur"]) for e in inside if e.get("args", {}).get("stream") != compute]
        leads = [lead(e) for e in inside if e.get("args", {}).get("stream") == compute and e["cat"] == "kernel"]
        leads = [value for value in leads if value is not None]
        compute_busy = union_length(on_compute)
        comm_busy = union_length(on_comm)
        rows.append({
            "gpu_us": last - first,
            "compute_busy_us": compute_busy,
            "compute_idle_us": (last - first) - compute_busy,
            "comm_busy_us": comm_busy,
            "comm_alone_us": comm_busy - intersection_length(on_comm, on_compute),
            "comm_ops": sum(1 for e in inside if e.get("args", {}).get("stream") != compute),
            "launch_lead_us": statistics.median(leads) if leads else None,
            "collective_calls_us": sum(dur for ts, dur in calls if begin <= ts and ts + dur <= end),
        })
        for e in inside:
            if e.get("args", {}).get("stream") != compute:
                comm_ops[e["name"]] = comm_ops.get(e["name"], 0.0) + e["dur"]
        for e in runtime:
            if begin <= e["ts"] <= end:
                runtime_calls[e["name"]] = runtime_calls.get(e["name"], 0) + 1
        for e in syncs:
            if begin <= e["ts"] <= end:
                args = e.get("args", {})
                key = "%s on stream %s%s" % (e.get("name"), args.get("stream"), "".join(
                    ", %s %s" % (name, args[name]) for name in sorted(args) if "stream" in name and name != "stream"))
                sync_ops[key] = sync_ops.get(key, 0) + 1
    median = {key: statistics.median(row[key] for row in rows if row[key] is not None)
              for key in rows[0] if any(row[key] is not None for row in rows)} if rows else {}
    per_step = {name: total / len(rows) for name, total in sorted(comm_ops.items(), key=lambda kv: -kv[1])}
    return {"steps": rows, "median": median, "comm_ops": per_step, "timeline": timeline,
            "runtime_calls": {name: count / len(rows) for name, count in sorted(runtime_calls.items())} if rows else {},
            "sync_ops": {key: count / len(rows) for key, count in sorted(sync_ops.items())} if rows else {}}


def backward_gaps(timeline, first=90):
    """Per profiled step of an analyse() timeline: the mean gap between the compute stream's operations from its
    `first`-th on (the backward pass of the 77 M-parameter model run-nccl-api.sh's ddp phase profiles: the gaps the
    GPU leaves between kernels the host queued long before), and the other streams' GPU time in that step. Returns
    [(step, mean gap or None, other streams' us)]."""
    rows = []
    for step in sorted({entry[0] for entry in timeline}):
        compute = sorted((e for e in timeline if e[0] == step and e[1] == "compute"), key=lambda e: e[3])
        gaps = [b[3] - (a[3] + a[4]) for a, b in zip(compute[first:], compute[first + 1:])]
        other = sum(e[4] for e in timeline if e[0] == step and e[1] != "compute")
        rows.append((step, statistics.mean(gaps) if gaps else None, other))
    return rows


def print_gaps(paths):
    """One line per saved run: its backward gaps and other streams' time per profiled step."""
    for path in paths:
        with open(path) as f:
            profile = json.load(f).get("ddp_profile")
        if not profile:
            continue  # a run without --profile-steps, or a comparison's JSON
        cells = ["%.2f us (other streams %.0f us)" % (gap, other) if gap is not None else "-"
                 for _, gap, other in backward_gaps(profile["timeline"])]
        print("%s: backward gaps by profiled step: %s" % (os.path.basename(path), "; ".join(cells)))


def profile_steps(step, steps):
    """Runs step() `steps` times under torch.profiler, each in an annotation named STEP_NAME, and analyses the
    trace. step() must synchronize the GPU before it returns, so the step's GPU work lies inside its annotation."""
    from torch.profiler import ProfilerActivity, profile, record_function

    options = {}
    try:  # the stream waits too, where this PyTorch records them
        from torch._C._profiler import _ExperimentalConfig
        options["experimental_config"] = _ExperimentalConfig(enable_cuda_sync_events=True)
    except (ImportError, TypeError):
        pass
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], **options) as prof:
        for _ in range(steps):
            with record_function(STEP_NAME):
                step()
    handle, path = tempfile.mkstemp(suffix=".json")
    os.close(handle)
    try:
        prof.export_chrome_trace(path)
        with open(path) as trace:
            events = json.load(trace)["traceEvents"]
    finally:
        os.remove(path)
    return analyse(events)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "gaps":
        sys.exit("usage: ddp_profile.py gaps RUN.json...")
    print_gaps(sys.argv[2:])
