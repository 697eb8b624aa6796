#!/usr/bin/env python3
"""scripts/coll_fit.py: its least-squares line on made-up points and on a committed run (round 43 call E on
4x H100, the reduce ring's default grid), whose figures docs/performance.md quotes. Run by ctest
(cpu.scripts.CollFit)."""
import io
import json
import os
import sys
import unittest
from contextlib import redirect_stdout

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import coll_fit  # noqa: E402

CALL_E = os.path.join(ROOT, "tests", "fixtures", "runs", "2026-11-26-h200x4-round43-ring-chunks", "call-e-h100")
MIB = 1024 * 1024


class CollFit(unittest.TestCase):
    def test_line_through_exact_points(self):
        fixed, per_mib = coll_fit.fit([(128, 40 + 2.5 * 128), (512, 40 + 2.5 * 512), (1024, 40 + 2.5 * 1024)])
        self.assertAlmostEqual(fixed, 40.0)
        self.assertAlmostEqual(per_mib, 2.5)
        self.assertIsNone(coll_fit.fit([(128, 1.0)]))
        self.assertIsNone(coll_fit.fit([(128, 1.0), (128, 2.0)]))

    def test_sizes(self):
        self.assertEqual(coll_fit.parse_size("128M"), 128 * MIB)
        self.assertEqual(coll_fit.parse_size("1G"), 1024 * MIB)
        self.assertEqual(coll_fit.parse_size("4096"), 4096)

    def test_committed_run(self):
        with open(os.path.join(CALL_E, "rd-b32.json")) as f:
            run = json.load(f)
        table = coll_fit.times_of(run, "out_of_place")
        (fixed, per_mib), count = coll_fit.line_of(table, 0, 128 * MIB, 1024 * MIB)
        self.assertEqual(count, 4)
        self.assertAlmostEqual(fixed, 44.0, delta=0.05)
        self.assertAlmostEqual(per_mib, 2.8359, delta=0.00005)
        out = io.StringIO()
        with redirect_stdout(out):
            coll_fit.main([os.path.join(CALL_E, "rd-b32.json"), "--from", "32M", "--to", "1G"])
        self.assertIn("| rd-b32.json | PEERLINK_ALGO=RING PEERLINK_COLL_RING_REDUCE_BLOCKS=0 | reduce | peerlink graph |",
                      out.getvalue())
        self.assertIn("| 6 |", out.getvalue())  # 32 MiB to 1 GiB: six sizes


if __name__ == "__main__":
    unittest.main()
