# Back-to-back small kernels on PyTorch's default stream, timed on the GPU, before and after collectives.
import os, sys, torch, torch.distributed as dist
dist.init_process_group("nccl")
r = dist.get_rank(); torch.cuda.set_device(r % torch.cuda.device_count())
x = torch.ones(1024, device="cuda")
big = torch.randn(8192, 8192, device="cuda")
def per_kernel(n=3000):
    torch.cuda.synchronize()
    for _ in range(3): big @ big  # the host gets far ahead while these run
    m = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    m.record()
    for _ in range(n): x.add_(1.0)
    e.record(); torch.cuda.synchronize()
    return m.elapsed_time(e) * 1000 / n
out = [("start", per_kernel())]
t = torch.ones(16, device="cuda"); dist.all_reduce(t); torch.cuda.synchronize()
out.append(("after 64 B all_reduce", per_kernel()))
b = torch.ones(8 << 20, device="cuda"); dist.all_reduce(b); torch.cuda.synchronize()
out.append(("after 32 MiB all_reduce", per_kernel()))
for _ in range(10): dist.all_reduce(b)
torch.cuda.synchronize()
out.append(("after 10 more", per_kernel()))
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    for _ in range(5): dist.all_reduce(b)
torch.cuda.synchronize()
out.append(("after 5 on a side stream", per_kernel()))
if r == 0: print(os.environ.get("GAPS_NAME", "?"), " | ".join("%s %.2f us" % kv for kv in out), flush=True)
dist.destroy_process_group()
