#!/usr/bin/env python3
"""scripts/coll_targets.py over committed runs (round 42 call D on 4x H100, round 42 call A's forced copy-engine
run): the verdicts it prints for the docs must follow from the JSON. Run by ctest (cpu.scripts.CollTargets)."""
import io
import json
import os
import sys
import unittest
from contextlib import redirect_stdout

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import coll_targets  # noqa: E402

ROUND = os.path.join(ROOT, "tests", "fixtures", "runs", "2026-11-26-h200x4-round42-copy-engines")
CALL_D = os.path.join(ROUND, "call-d-h100")


def load(path):
    with open(path) as f:
        return json.load(f)


class CollTargets(unittest.TestCase):
    def test_busbw_at_512m_against_the_target_and_nccl(self):
        runs = [load(os.path.join(CALL_D, "coll-all_gather-512M.json")),
                load(os.path.join(CALL_D, "coll-broadcast-512M.json"))]
        self.assertEqual(coll_targets.busbw_512m(runs, "all_gather", 350), ("380.5 (best NCCL 341.5)", "met"))
        self.assertEqual(coll_targets.busbw_512m(runs, "broadcast", 370), ("354.2 (best NCCL 358.4)", "not met"))
        self.assertEqual(coll_targets.busbw_512m(runs, "all_to_all", 355), ("no run", "-"))

    def test_small_all_reduce_and_the_ratio_band(self):
        runs = [load(os.path.join(CALL_D, "coll-all_reduce-n200.json"))]
        self.assertEqual(coll_targets.small_all_reduce(runs, "peerlink_graph", 4.0),
                         ("2.93-3.45 us (200 iterations a cell)", "met"))
        text, verdict = coll_targets.all_reduce_ratio(runs)
        self.assertEqual(verdict, "not met")
        self.assertIn("below 1.2x: 16M 1.16x", text)

    def test_cells_behind_nccl(self):
        runs = [load(os.path.join(CALL_D, "coll-reduce-512M.json")),
                load(os.path.join(CALL_D, "coll-all_gather-512M.json"))]
        behind = coll_targets.behind(runs)
        self.assertEqual(len(behind), 2)  # reduce in both placements; all-gather ahead
        self.assertTrue(all(row.startswith("| reduce | 512M |") for row in behind))

    def test_runs_with_changed_settings_are_passed_over(self):
        out = io.StringIO()
        with redirect_stdout(out):
            coll_targets.main([os.path.join(ROUND, "call-a-h100", "coll-all_gather-ce.json"),
                               os.path.join(CALL_D, "coll-all_gather-512M.json")])
        text = out.getvalue()
        self.assertIn("passed over: ", text)
        self.assertIn("PEERLINK_COLL_CE=1", text)
        self.assertIn("| all-gather 512 MiB busbw >= 350 GB/s | 380.5 (best NCCL 341.5) | met |", text)


if __name__ == "__main__":
    unittest.main()
