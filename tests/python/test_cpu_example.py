"""examples/python/p2p_access_check.py, the replacement of a framework's hand-written P2P check, on fixtures."""

import importlib.util
import sys
import types
import unittest
from unittest import mock

import peerlink
from support import EXAMPLES, environment, fixture, run_python

EXAMPLE = EXAMPLES / "python" / "p2p_access_check.py"


def load_example():
    spec = importlib.util.spec_from_file_location("p2p_access_check", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ExampleTest(unittest.TestCase):
    def test_pairs_without_p2p_are_false_and_not_an_error(self) -> None:
        done = run_python([str(EXAMPLE)], {"PEERLINK_TOPO_FILE": str(fixture("rtx4090x2"))})
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        self.assertEqual(lines[:2], ["GPU 0 -> GPU 1: False (UNSUPPORTED: p2p_not_reported)",
                                     "GPU 1 -> GPU 0: False (UNSUPPORTED: p2p_not_reported)"])
        self.assertIn("NOTE topology_from_file: run without PEERLINK_TOPO_FILE / --topo-file on the machine itself",
                      lines)

    def test_pairs_that_were_not_probed_fail_closed(self) -> None:
        done = run_python([str(EXAMPLE)], {"PEERLINK_TOPO_FILE": str(fixture("h200x4_vm"))})
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertTrue(done.stdout.startswith("GPU 0 -> GPU 1: False (BROKEN: ce_write_not_run, "), done.stdout)
        self.assertIn("12 pair(s) in ", done.stdout)

    def test_no_gpu_is_said_in_one_line(self) -> None:
        done = run_python([str(EXAMPLE)], {"CUDA_VISIBLE_DEVICES": "-1"})
        self.assertEqual(done.returncode, 3)
        self.assertRegex(done.stderr, r"^p2p_access_check: no CUDA GPU found")

    def test_the_check_has_the_frameworks_signature(self) -> None:
        example = load_example()
        with environment(PEERLINK_TOPO_FILE=str(fixture("dual_socket_pcie"))):
            self.assertFalse(example.gpu_p2p_access_check(1, 2))  # not probed: fails closed
            self.assertTrue(example.gpu_p2p_access_check(3, 3))

    def test_local_rank_zero_probes_before_the_others(self) -> None:
        for local_rank, expected in (("0", ["verify", "barrier"]), ("1", ["barrier", "verify"])):
            with self.subTest(local_rank=local_rank):
                calls = []
                dist = types.SimpleNamespace(is_available=lambda: True, is_initialized=lambda: True,
                                             barrier=lambda: calls.append("barrier"))
                verify = peerlink.verify_peers

                def recorded():
                    calls.append("verify")
                    return verify()

                example = load_example()
                with environment(LOCAL_RANK=local_rank, PEERLINK_TOPO_FILE=str(fixture("rtx4090x2"))), \
                        mock.patch.dict(sys.modules, {"torch.distributed": dist}), \
                        mock.patch.object(peerlink, "verify_peers", recorded):
                    self.assertFalse(example.gpu_p2p_access_check(0, 1))
                    self.assertFalse(example.gpu_p2p_access_check(1, 0))
                self.assertEqual(calls, expected)


if __name__ == "__main__":
    unittest.main()
