#!/usr/bin/env python3
"""scripts/ring_trace_summary.py on committed traces: round 52's reduce-scatter at 512 MiB on 4x H100, one
process whose cells all had a chain ending ~255 us early (call A), and cells with the chains keeping pace
(call B), as the round's README and docs/performance.md quote them. Run by ctest (cpu.scripts.RingTraceSummary)."""
import io
import os
import sys
import unittest
from contextlib import redirect_stdout

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import ring_trace_summary  # noqa: E402

ROUND = os.path.join(ROOT, "tests", "fixtures", "runs", "2026-11-27-h200x4-round52-ring-trace")


class RingTraceSummary(unittest.TestCase):
    def test_a_chain_ahead(self):
        run = ring_trace_summary.load(os.path.join(ROUND, "call-a-h100", "trace-out-1.json.xz"))
        rows = [ring_trace_summary.summarize_cell(cell) for cell in run["cells"]]
        self.assertEqual(len(rows), 16)
        for index, median, chains, spread, tail, pace in rows:
            self.assertTrue(1212 < median < 1215, median)
            self.assertEqual(len(chains), 4)
            self.assertEqual(chains.index(min(chains)), 2)  # chain 2 ends first
            self.assertTrue(240 < spread < 270, spread)
            self.assertEqual(pace, 0.0)  # no pacing in that build

    def test_chains_keeping_pace(self):
        run = ring_trace_summary.load(os.path.join(ROUND, "call-b-h100", "trace-pace1-1.json.xz"))
        for index, median, chains, spread, tail, pace in map(ring_trace_summary.summarize_cell, run["cells"]):
            self.assertTrue(1120 < median < 1128, median)
            self.assertLessEqual(spread, 21)
            self.assertGreater(pace, 100)  # the first ranks waited on the pace

    def test_text(self):
        out = io.StringIO()
        with redirect_stdout(out):
            ring_trace_summary.main([os.path.join(ROUND, "call-a-h100", "trace-out-2.json.xz")])
        lines = out.getvalue().splitlines()
        self.assertIn("trace-out-2.json.xz", lines[0])
        self.assertEqual(len(lines), 2 + 16)
        self.assertIn("1123.7", lines[2])


if __name__ == "__main__":
    unittest.main()
