#!/usr/bin/env python3
"""scripts/device/nccl_api_compare.py over nccl-tests' text output (its 2.19 layout, rows as its util.cu prints
them) and nccl_api_torch.py's reports, written here. Run by ctest (cpu.scripts.NcclApiCompare)."""
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts", "device"))
import nccl_api_compare  # noqa: E402

HEADER = """# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
"""


def run_compare(*args):
    """nccl_api_compare.py's main with `args`: (exit code, what it printed)."""
    out = io.StringIO()
    saved = sys.argv
    sys.argv = ["nccl_api_compare.py", *args]
    try:
        with redirect_stdout(out):
            code = nccl_api_compare.main()
    finally:
        sys.argv = saved
    return code, out.getvalue()


def output(binary, rows):
    return f"# nccl-tests binary: {binary} local -g 4\n" + HEADER + "".join(rows) + "# Avg bus bandwidth    : 1\n"


def row(size, busbw_out, busbw_in, wrong_out="0", wrong_in="0", dtype="float", op="sum", time_out="10.00",
        time_in="10.00"):
    return (f"{size:>12} {size // 4:>13} {dtype:>9} {op:>7} {-1:>7}  {time_out:>7}  {busbw_out:>6}  {busbw_out:>6}  "
            f"{wrong_out:>6}  {time_in:>7}  {busbw_in:>6}  {busbw_in:>6}  {wrong_in:>6}\n")


class NcclTests(unittest.TestCase):
    def write(self, folder, name, text):
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_rows_are_parsed_and_the_best_placement_compared(self):
        with tempfile.TemporaryDirectory() as folder:
            # Compared by the best time of each side (busbw reads 0.00 at small sizes): NCCL 8 B best 10 us against
            # peerlink's 5; 1 KiB NCCL's 80 against peerlink's 110.
            nccl = self.write(folder, "nccl.txt", output("all_reduce", [
                row(8, "0.00", "0.00", time_out="10.00", time_in="20.00"),
                row(1024, "0.01", "0.01", time_out="100.00", time_in="80.00")]))
            ours = self.write(folder, "ours.txt", output("all_reduce", [
                row(8, "0.00", "0.00", time_out="5.00", time_in="30.00"),
                row(1024, "0.01", "0.01", time_out="110.00", time_in="120.00")]))
            code, text = run_compare("nccl-tests", nccl, ours, "--json", os.path.join(folder, "c.json"))
            self.assertEqual(code, 0)
            self.assertIn("time NCCL / peerlink 0.727 .. 2.000 over 2 rows, 1 below 1.0", text)
            with open(os.path.join(folder, "c.json")) as f:
                rows = json.load(f)["rows"]
            self.assertEqual([round(r["ratio"], 3) for r in rows], [2.0, 0.727])
            self.assertEqual([r["nccl_us"] for r in rows], [10.0, 80.0])

    def test_a_wrong_element_or_a_missing_row_fails(self):
        with tempfile.TemporaryDirectory() as folder:
            nccl = self.write(folder, "nccl.txt", output("reduce", [row(8, "1.00", "1.00"), row(64, "1.00", "1.00")]))
            ours = self.write(folder, "ours.txt", output("reduce", [row(8, "1.00", "1.00", wrong_in="3")]))
            code, text = run_compare("nccl-tests", nccl, ours)
            self.assertEqual(code, 1)
            self.assertIn("#wrong [0.0, 3.0]", text)
            self.assertIn("missing from peerlink's output", text)

    def test_a_run_without_checks_has_no_wrong_count(self):
        with tempfile.TemporaryDirectory() as folder:
            path = self.write(folder, "x.txt", output("alltoall", [row(8, "1.00", "1.00", "N/A", "N/A")]))
            rows = nccl_api_compare.parse_nccl_tests(path)
            self.assertEqual(list(rows.values())[0]["wrong"], [None, None])


class Torch(unittest.TestCase):
    def report(self, folder, name, **fields):
        report = {"checks_passed": 100, "checks_failed": {}, "libraries": ["/site/nvidia/nccl/lib/libnccl.so.2"],
                  "ddp_losses": [7.0, 6.5], "ddp_step_ms_median": 10.0,
                  "all_reduce_us_median": {"8": 20.0, "1048576": 40.0}}
        report.update(fields)
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            json.dump(report, f)
        return path

    def test_a_matching_peerlink_run(self):
        with tempfile.TemporaryDirectory() as folder:
            nccl = self.report(folder, "n.json")
            ours = self.report(folder, "p.json", libraries=["/opt/peerlink/lib/libpeerlink_nccl.so.2"],
                               ddp_losses=[7.0, 6.5001], ddp_step_ms_median=9.0,
                               all_reduce_us_median={"8": 10.0, "1048576": 40.0})
            code, text = run_compare("torch", nccl, ours)
            self.assertEqual(code, 0, text)
            self.assertIn("(peerlink / NCCL 0.9)", text)
            self.assertIn("all_reduce 8 B: NCCL 20.00 us, peerlink 10.00 us (peerlink / NCCL 0.500)", text)

    def test_a_check_failing_on_both_libraries_is_the_callers(self):
        with tempfile.TemporaryDirectory() as folder:
            both = {"0": ["premul_sum bf16"]}
            nccl = self.report(folder, "n.json", checks_failed=both)
            ours = self.report(folder, "p.json", libraries=["/opt/peerlink/lib/libpeerlink_nccl.so.2"],
                               checks_failed=both)
            code, text = run_compare("torch", nccl, ours)
            self.assertEqual(code, 0, text)
            self.assertIn("NOTE checks failing on the real NCCL too", text)
            ours = self.report(folder, "p.json", libraries=["/opt/peerlink/lib/libpeerlink_nccl.so.2"],
                               checks_failed={"0": ["premul_sum bf16", "broadcast"]})
            code, text = run_compare("torch", nccl, ours)
            self.assertEqual(code, 1, text)
            self.assertIn("PROBLEM peerlink's run failed checks: [('0', 'broadcast')]", text)

    def test_losses_apart_or_the_real_library_mapped_fail(self):
        with tempfile.TemporaryDirectory() as folder:
            nccl = self.report(folder, "n.json")
            ours = self.report(folder, "p.json", ddp_losses=[7.0, 6.0])
            code, text = run_compare("torch", nccl, ours)
            self.assertEqual(code, 1)
            self.assertIn("did not map libpeerlink_nccl", text)
            self.assertIn("DDP losses differ", text)


def ddp_report(steps_ms, backward_ms, losses):
    return {"ddp_step_ms_median": steps_ms, "ddp_phase_ms_median": {"backward": backward_ms}, "ddp_losses": losses}


class Ddp(unittest.TestCase):
    def write(self, folder, reports):
        for name, report in reports.items():
            with open(os.path.join(folder, f"ddp-{name}.json"), "w") as f:
                json.dump(report, f)

    def test_each_run_against_the_real_nccls_mean(self):
        with tempfile.TemporaryDirectory() as folder:
            self.write(folder, {"nccl-1": ddp_report(40.0, 30.0, [2.0, 1.0]),
                                "nccl-2": ddp_report(42.0, 31.0, [2.0, 1.0]),
                                "auto-1": ddp_report(41.0, 30.5, [2.0000001, 1.0]),
                                "auto-2": ddp_report(43.0, 31.5, [2.0, 0.9999999])})
            with open(os.path.join(folder, "ddp-nccl-1.txt"), "w") as f:  # a run's log beside its report
                f.write("torchrun's output\n")
            out_json = os.path.join(folder, "compare.json")
            code, printed = run_compare("ddp", folder, "--json", out_json)
            self.assertEqual(code, 0, printed)
            with open(out_json) as f:
                runs = json.load(f)["runs"]
            self.assertEqual(sorted(runs), ["auto", "nccl"])
            self.assertAlmostEqual(runs["auto"]["step_mean_ms"], 42.0)
            self.assertAlmostEqual(runs["auto"]["step_ratio"], 42.0 / 41.0)
            self.assertAlmostEqual(runs["auto"]["backward_mean_ms"], 31.0)
            self.assertAlmostEqual(runs["auto"]["loss_worst_relative"], 1e-7, places=12)
            self.assertIn("auto: step ms 41.00, 43.00", printed)
            self.assertEqual(runs["auto"]["shared_calls"], [None, None], "no log: nothing counted")

    def test_the_logs_teardown_line_says_how_many_calls_shared(self):
        with tempfile.TemporaryDirectory() as folder:
            self.write(folder, {"nccl-1": ddp_report(40.0, 30.0, [2.0]), "auto-1": ddp_report(41.0, 30.5, [2.0]),
                                "auto-2": ddp_report(41.0, 30.5, [2.0])})
            with open(os.path.join(folder, "ddp-auto-1.txt"), "w") as f:
                f.write("vm:1 PEERLINK INFO COLL shared calls: 50 on the ranks' own buffers, 1744 staged because a rank"
                        " came later than sharing would save\n")
                f.write("vm:2 PEERLINK INFO COLL shared calls: 51 on the ranks' own buffers, 1743 staged because a rank"
                        " came later than sharing would save\n")
            out_json = os.path.join(folder, "compare.json")
            code, printed = run_compare("ddp", folder, "--json", out_json)
            self.assertEqual(code, 0, printed)
            with open(out_json) as f:
                runs = json.load(f)["runs"]
            self.assertEqual(runs["auto"]["shared_calls"], [[50, 1744], None], "the first process's line, per round")
            self.assertIn("calls shared 50 of 1794", printed)
            nccl_line = next(line for line in printed.splitlines() if line.startswith("nccl:"))
            self.assertNotIn("calls shared", nccl_line)

    def test_losses_past_the_tolerance_fail(self):
        with tempfile.TemporaryDirectory() as folder:
            self.write(folder, {"nccl-1": ddp_report(40.0, 30.0, [2.0, 1.0]),
                                "off-1": ddp_report(40.0, 30.0, [2.0, 1.01])})
            code, printed = run_compare("ddp", folder)
            self.assertEqual(code, 1)
            self.assertIn("PROBLEM off: DDP losses differ", printed)

    def test_without_the_real_nccls_rounds_nothing_is_compared(self):
        with tempfile.TemporaryDirectory() as folder:
            self.write(folder, {"auto-1": ddp_report(40.0, 30.0, [2.0])})
            code, printed = run_compare("ddp", folder)
            self.assertEqual(code, 1)
            self.assertIn("no round of the real NCCL", printed)


if __name__ == "__main__":
    unittest.main()
