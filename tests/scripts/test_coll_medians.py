#!/usr/bin/env python3
"""scripts/coll_medians.py on committed runs: round 48 call E's alternated eager all-reduce runs on 4x H100,
whose medians the round's README and docs/performance.md quote. Run by ctest (cpu.scripts.CollMedians)."""
import io
import os
import sys
import unittest
from contextlib import redirect_stdout

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import coll_medians  # noqa: E402

CALL_E = os.path.join(ROOT, "tests", "fixtures", "runs", "2026-11-26-h200x4-round48-eager-direct", "call-e-h100")


def run_main(args):
    out = io.StringIO()
    with redirect_stdout(out):
        coll_medians.main(args)
    return out.getvalue()


class CollMedians(unittest.TestCase):
    def test_rows_of_committed_runs(self):
        paths = [os.path.join(CALL_E, f"ar-{build}-{i}.json") for build in ("new", "old") for i in (1, 2)]
        rows = coll_medians.rows_of(paths, "peerlink", 1, 64 * 1024)
        self.assertEqual([row[1] for row in rows], ["479bddf0c13c"] * 2 + ["0213ba3ee616"] * 2)
        self.assertEqual({row[2] for row in rows}, {"defaults"})  # the log settings do not count
        self.assertAlmostEqual(rows[1][3][0], 6.48, delta=0.005)  # ar-new-2: median out of place
        self.assertAlmostEqual(rows[2][3][0], 7.37, delta=0.005)  # ar-old-1
        self.assertLess(rows[1][3][1], rows[1][3][0])  # min below the median
        self.assertGreater(rows[1][3][2], rows[1][3][0])

    def test_tables(self):
        text = run_main(["--to", "64K", os.path.join(CALL_E, "ar-new-1.json"), os.path.join(CALL_E, "ar-new-2.json"),
                         os.path.join(CALL_E, "ar-old-1.json")])
        self.assertIn("| ar-new-2.json | 479bddf0c13c | defaults | 6.48 (", text)
        self.assertIn("| 479bddf0c13c | defaults | 2 | 8.39 / 6.48 |", text)
        self.assertIn("| 0213ba3ee616 | defaults | 1 | 7.37 |", text)

    def test_graph_config_and_range(self):
        graph = coll_medians.rows_of([os.path.join(CALL_E, "ar-new-1.json")], "peerlink_graph", 1, 64 * 1024)
        eager = coll_medians.rows_of([os.path.join(CALL_E, "ar-new-1.json")], "peerlink", 1, 64 * 1024)
        self.assertLess(graph[0][3][0], eager[0][3][0])  # a graph replay is cheaper than eager calls
        none = coll_medians.rows_of([os.path.join(CALL_E, "ar-new-1.json")], "nccl", 1, 64 * 1024)
        self.assertIsNone(none[0][3])  # --no-nccl run: nothing to count
        self.assertIn("| — | — |", run_main(["--config", "nccl", os.path.join(CALL_E, "ar-new-1.json")]))

    def test_bad_arguments(self):
        with self.assertRaises(SystemExit):
            coll_medians.main(["--bogus", "x.json"])
        with self.assertRaises(SystemExit):
            coll_medians.main(["--from"])
        with self.assertRaises(SystemExit):
            coll_medians.main([])


if __name__ == "__main__":
    unittest.main()
