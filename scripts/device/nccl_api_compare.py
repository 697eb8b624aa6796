#!/usr/bin/env python3
"""Peerlink's NCCL API beside the real NCCL, from outputs of one device call (scripts/device/run-nccl-api.sh).

  nccl_api_compare.py nccl-tests NCCL.txt PEERLINK.txt [--json OUT]
      nccl-tests' text outputs (one or more binaries' runs concatenated), the real NCCL's and peerlink's: per
      binary, size, type and op the best time of out-of-place and in-place, NCCL / peerlink (busbw's ratio where
      busbw has digits; below a few KiB nccl-tests prints it as 0.00), and every #wrong. Exit 1 when a row has #wrong > 0 or is missing from peerlink's output.
  nccl_api_compare.py torch NCCL.json PEERLINK.json [--json OUT]
      scripts/device/nccl_api_torch.py's reports: failed checks, which library was mapped, the DDP losses side
      by side (within --loss-rtol, reduction order aside), step time and all_reduce latency ratios. Exit 1 when a
      check failed on peerlink and not on the real NCCL, peerlink's run did not map libpeerlink_nccl, or a loss
      differs past the tolerance. A check failing on both is the caller's: printed, peerlink answering as NCCL does.
  nccl_api_compare.py ddp DIR [--json OUT]
      run-nccl-api.sh ddp's reports in DIR (ddp-NAME-ROUND.json, NAME "nccl" the real NCCL's): per run, the median
      step and backward pass of each round, their means and the means' ratio to NCCL's, the worst relative
      difference of its losses from NCCL's first round, and where a round's log (ddp-NAME-ROUND.txt) has peerlink's
      teardown line "shared calls: N ..., M staged ...", how many calls shared their buffers. Exit 1 when a run's
      losses differ past --loss-rtol or NCCL has no round.
Ratios are printed, never judged here: the docs and the issue judge them.
"""
import argparse
import json
import os
import re
import sys


def parse_nccl_tests(path):
    """{(binary, size, type, redop, root): {"busbw": best, "wrong": [oop, ip], "time": [oop, ip]}}."""
    rows = {}
    binary = "?"
    with open(path, errors="replace") as text:
        for line in text:
            if line.startswith("# nccl-tests binary:"):  # run-nccl-api.sh writes it before each run
                binary = line.split(":", 1)[1].strip()
                continue
            fields = line.split()
            if len(fields) < 13 or not fields[0].isdigit():
                continue
            def number(value):
                try:
                    return float(value)
                except ValueError:
                    return None
            key = (binary, int(fields[0]), fields[2], fields[3], fields[4])
            busbw = [number(fields[7]), number(fields[11])]
            times = [number(fields[5]), number(fields[9])]
            rows[key] = {
                "best_us": min(t for t in times if t) if any(times) else None,
                "busbw": max(b for b in busbw if b is not None) if any(b is not None for b in busbw) else None,
                "wrong": [number(fields[8]), number(fields[12])],
                "time": [number(fields[5]), number(fields[9])],
            }
    return rows


def compare_nccl_tests(args):
    reference = parse_nccl_tests(args.reference)
    ours = parse_nccl_tests(args.ours)
    problems = []
    table = []
    for key in sorted(reference):
        row = ours.get(key)
        if row is None:
            problems.append(f"missing from peerlink's output: {key}")
            continue
        wrong = [w for w in row["wrong"] if w]
        if wrong:
            problems.append(f"#wrong {row['wrong']} at {key}")
        nccl_us = reference[key]["best_us"]
        ratio = nccl_us / row["best_us"] if nccl_us and row["best_us"] and key[1] > 0 else None
        table.append({"binary": key[0], "size": key[1], "type": key[2], "op": key[3], "root": key[4],
                      "nccl_busbw": reference[key]["busbw"], "peerlink_busbw": row["busbw"],
                      "nccl_us": nccl_us, "peerlink_us": row["best_us"], "ratio": ratio,
                      "peerlink_wrong": row["wrong"]})
    for key in sorted(set(ours) - set(reference)):
        wrong = [w for w in ours[key]["wrong"] if w]
        if wrong:
            problems.append(f"#wrong {ours[key]['wrong']} at {key} (peerlink only)")
    by_binary = {}
    for row in table:
        if row["ratio"] is not None:
            by_binary.setdefault(row["binary"], []).append(row["ratio"])
    for binary, ratios in sorted(by_binary.items()):
        below = sum(1 for r in ratios if r < 1.0)
        print(f"{binary}: time NCCL / peerlink {min(ratios):.3f} .. {max(ratios):.3f} over {len(ratios)} rows, "
              f"{below} below 1.0")
    print(f"rows compared: {len(table)}; problems: {len(problems)}")
    for problem in problems[:40]:
        print("  " + problem)
    return {"rows": table, "problems": problems}, 1 if problems else 0


def compare_torch(args):
    with open(args.reference) as f:
        reference = json.load(f)
    with open(args.ours) as f:
        ours = json.load(f)
    problems = []
    notes = []
    def failed_checks(report):
        return {(rank, check) for rank, checks in report.get("checks_failed", {}).items() for check in checks}
    on_both = failed_checks(reference) & failed_checks(ours)
    if on_both:
        notes.append(f"checks failing on the real NCCL too (the caller's expectation, not peerlink): {sorted(on_both)}")
    for name, report in (("NCCL", reference), ("peerlink", ours)):
        own = sorted(failed_checks(report) - on_both)
        if own:
            problems.append(f"{name}'s run failed checks: {own}")
    if not any("peerlink_nccl" in path for path in ours.get("libraries", [])):
        problems.append(f"peerlink's run did not map libpeerlink_nccl: {ours.get('libraries')}")
    losses = list(zip(reference.get("ddp_losses", []), ours.get("ddp_losses", [])))
    worst = max((abs(a - b) / max(abs(a), 1e-12) for a, b in losses), default=None)
    if worst is None or worst > args.loss_rtol:
        problems.append(f"DDP losses differ by {worst} (tolerance {args.loss_rtol})")
    ratios = {}
    for size, nccl_us in reference.get("all_reduce_us_median", {}).items():
        ours_us = ours.get("all_reduce_us_median", {}).get(size)
        if ours_us:
            ratios[size] = ours_us / nccl_us
    step = None
    if reference.get("ddp_step_ms_median") and ours.get("ddp_step_ms_median"):
        step = ours["ddp_step_ms_median"] / reference["ddp_step_ms_median"]
    print(f"checks passed (rank 0): NCCL {reference.get('checks_passed')}, peerlink {ours.get('checks_passed')}")
    print(f"DDP losses, worst relative difference: {worst}")
    print(f"DDP step ms: NCCL {reference.get('ddp_step_ms_median')}, peerlink {ours.get('ddp_step_ms_median')}"
          f" (peerlink / NCCL {step})")
    for size, ratio in ratios.items():
        call = ""
        nccl_call = reference.get("all_reduce_call_us_median", {}).get(size)
        ours_call = ours.get("all_reduce_call_us_median", {}).get(size)
        if nccl_call and ours_call:
            call = f"; the call alone: NCCL {nccl_call:.2f} us, peerlink {ours_call:.2f} us"
        print(f"all_reduce {size} B: NCCL {reference['all_reduce_us_median'][size]:.2f} us, peerlink "
              f"{ours['all_reduce_us_median'][size]:.2f} us (peerlink / NCCL {ratio:.3f}){call}")
    for note in notes:
        print("NOTE " + note)
    for problem in problems:
        print("PROBLEM " + problem)
    summary = {"loss_worst_relative": worst, "step_ratio": step, "all_reduce_ratio": ratios, "problems": problems,
               "notes": notes, "nccl": reference, "peerlink": ours}
    return summary, 1 if problems else 0


SHARED_CALLS = re.compile(r"shared calls: (\d+) on the ranks' own buffers, (\d+) staged")


def shared_calls_of(log_path):
    """[shared, staged for a late rank] from the first process's teardown line in a run's log, or None."""
    if not os.path.exists(log_path):
        return None
    with open(log_path, errors="replace") as f:
        for line in f:
            match = SHARED_CALLS.search(line)
            if match:
                return [int(match.group(1)), int(match.group(2))]
    return None


def compare_ddp(args):
    runs = {}
    for name in sorted(os.listdir(args.reference)):
        match = re.fullmatch(r"ddp-(.+)-(\d+)\.json", name)
        if not match:
            continue
        with open(os.path.join(args.reference, name)) as f:
            report = json.load(f)
        report["shared_calls"] = shared_calls_of(os.path.join(args.reference, name[:-len(".json")] + ".txt"))
        runs.setdefault(match.group(1), []).append((int(match.group(2)), report))
    problems = []
    if "nccl" not in runs:
        problems.append("no round of the real NCCL (ddp-nccl-N.json) to compare with")
        for problem in problems:
            print("PROBLEM " + problem)
        return {"runs": {}, "problems": problems}, 1
    for rounds in runs.values():
        rounds.sort(key=lambda pair: pair[0])
    reference_losses = runs["nccl"][0][1].get("ddp_losses", [])

    def mean(values):
        return sum(values) / len(values) if values else None

    summary = {}
    for name, rounds in runs.items():
        steps = [report.get("ddp_step_ms_median") for _, report in rounds]
        backward = [(report.get("ddp_phase_ms_median") or {}).get("backward") for _, report in rounds]
        worst = max((abs(a - b) / max(abs(b), 1e-12) for _, report in rounds
                     for a, b in zip(report.get("ddp_losses", []), reference_losses)), default=None)
        summary[name] = {"step_ms": steps, "backward_ms": backward, "step_mean_ms": mean([s for s in steps if s]),
                         "backward_mean_ms": mean([b for b in backward if b]), "loss_worst_relative": worst,
                         "shared_calls": [report["shared_calls"] for _, report in rounds]}
        if name != "nccl" and (worst is None or worst > args.loss_rtol):
            problems.append(f"{name}: DDP losses differ from NCCL's by {worst} (tolerance {args.loss_rtol})")
    nccl_step = summary["nccl"]["step_mean_ms"]
    for name, run in summary.items():
        run["step_ratio"] = run["step_mean_ms"] / nccl_step if run["step_mean_ms"] and nccl_step else None
        steps = ", ".join(f"{s:.2f}" for s in run["step_ms"] if s)
        backward = ", ".join(f"{b:.2f}" for b in run["backward_ms"] if b)
        ratio = f"{run['step_ratio']:.4f}" if run["step_ratio"] else "-"
        counted = [c for c in run["shared_calls"] if c]
        shared = ("; calls shared " + ", ".join(f"{c[0]} of {c[0] + c[1]}" for c in counted)) if counted else ""
        print(f"{name}: step ms {steps} (mean / NCCL's {ratio}); backward ms {backward}; "
              f"losses' worst relative difference from NCCL's {run['loss_worst_relative']}{shared}")
    for problem in problems:
        print("PROBLEM " + problem)
    return {"runs": summary, "problems": problems}, 1 if problems else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=("nccl-tests", "torch", "ddp"))
    parser.add_argument("reference", help="the real NCCL's output (ddp: the folder of every run's report)")
    parser.add_argument("ours", nargs="?", help="peerlink's output (not for ddp)")
    parser.add_argument("--json", help="write the comparison here")
    parser.add_argument("--loss-rtol", type=float, default=1e-3,
                        help="torch, ddp: largest relative loss difference")
    args = parser.parse_args()
    if (args.ours is None) != (args.kind == "ddp"):
        parser.error("nccl-tests and torch compare two outputs; ddp reads one folder")
    compare = {"nccl-tests": compare_nccl_tests, "torch": compare_torch, "ddp": compare_ddp}[args.kind]
    summary, code = compare(args)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(summary, out, indent=1)
    return code


if __name__ == "__main__":
    sys.exit(main())
