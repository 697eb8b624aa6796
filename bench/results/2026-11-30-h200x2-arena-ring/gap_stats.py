# The compute stream's gaps between consecutive backward-pass kernels in the profiled DDP steps of this folder's
# runs: mean gap (us) where no communication kernel runs beside it / where one does, per profiled step.
# Run from this folder: python3 gap_stats.py
import glob, json, statistics

def stats(path):
    timeline = json.load(open(path))["ddp_profile"]["timeline"]  # [step, stream kind, stream, start, length, name]
    out = []
    for step in sorted({e[0] for e in timeline}):
        compute = sorted((e for e in timeline if e[0] == step and e[1] == "compute"), key=lambda e: e[3])
        comm = [e for e in timeline if e[0] == step and e[1] != "compute"]
        alone, beside = [], []
        for a, b in zip(compute[90:], compute[91:]):  # from the backward pass's first kernel (index 90) on
            end = a[3] + a[4]
            busy = any(c[3] < b[3] and c[3] + c[4] > end for c in comm)
            (beside if busy else alone).append(b[3] - end)
        out.append("%.2f/%.2f" % (statistics.mean(alone), statistics.mean(beside)))
    return " ".join(out)

for folder in ["call-e/ddp-profile", "call-f/ddp", "call-h"]:
    for path in sorted(glob.glob(folder + "/ddp-*-[0-9].json")):
        print(path, stats(path))
