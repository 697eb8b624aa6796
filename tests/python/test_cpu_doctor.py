"""peerlink.verify_peers() and cached_verdicts() without a GPU: the topology fixtures as PEERLINK_TOPO_FILE (the
verdicts of a saved topology, where nothing can be probed) and verdicts cached as `peerlink doctor` caches them."""

import json
import unittest

import peerlink
from peerlink import Verdict
from support import CacheTestCase, environment, fixture, topology_fixtures

PROBE_METHODS = ("ce_write", "ce_read", "sm_write", "sm_read", "ipc", "cumem", "flag_handshake")


def verify_file(path, **options) -> peerlink.VerifyResult:
    with environment(PEERLINK_TOPO_FILE=str(path)):
        return peerlink.verify_peers(**options)


class VerifyPeersFromFilesTest(unittest.TestCase):
    def test_every_fixture_fails_closed(self) -> None:
        # Nothing is probed for a saved topology: each pair CUDA offers P2P is BROKEN with every method "not run",
        # each other pair UNSUPPORTED (p2p_not_reported); the overall verdict is BROKEN where any pair has P2P.
        for path in topology_fixtures():
            with self.subTest(fixture=str(path)):
                result = verify_file(path)
                document = json.loads(path.read_text())
                count = len(document["gpus"])
                self.assertEqual(len(result.pairs), count * (count - 1))
                self.assertEqual(result.probes, ())
                self.assertEqual(result.cached_pairs, 0)
                p2p = {(p["src"], p["dst"]) for p in document["pairs"] if p.get("can_access_peer", False)}
                for pair in result.pairs:
                    if (pair.src, pair.dst) in p2p:
                        self.assertEqual(pair.verdict, Verdict.BROKEN, pair)
                        self.assertEqual(pair.reasons, tuple(f"{m}_not_run" for m in PROBE_METHODS))
                    else:
                        self.assertEqual(pair.verdict, Verdict.UNSUPPORTED, pair)
                        self.assertEqual(pair.reasons, ("p2p_not_reported",))
                    self.assertFalse(pair.usable)
                    self.assertFalse(result.usable(pair.src, pair.dst))
                self.assertEqual(result.overall, Verdict.BROKEN if p2p else Verdict.OK)
                self.assertEqual(result.ok, not p2p)
                self.assertIn("topology_from_file", [finding.code for finding in result.findings])
                self.assertEqual(result.topology.source, str(path))

    def test_findings_carry_severity_fix_and_gpus(self) -> None:
        result = verify_file(fixture("h200x4_vm"), devices=[2, 0])
        self.assertEqual({(p.src, p.dst) for p in result.pairs}, {(0, 2), (2, 0)})
        dropped = [f for f in result.findings if f.code == "ce_write_not_run"]
        self.assertEqual(sorted(f.gpus for f in dropped), [(0, 2), (2, 0)])
        for finding in dropped:
            self.assertEqual(finding.severity, Verdict.BROKEN)
            self.assertTrue(finding.summary and finding.fix, finding)
        note = next(f for f in result.findings if f.code == "topology_from_file")
        self.assertEqual((note.severity, note.gpus), (Verdict.OK, ()))
        self.assertIn("h200x4_vm.json", note.summary)
        self.assertEqual(result.verdict(0, 2).verdict, Verdict.BROKEN)
        self.assertIsNone(result.verdict(0, 1))  # GPU 1 was not asked about
        self.assertTrue(result.usable(1, 1))

    def test_cross_process_uses_the_program_the_package_carries(self) -> None:
        def codes(result):
            return {finding.code for finding in result.findings}

        self.assertIn("cross_process_not_probed", codes(verify_file(fixture("rtx4090x2"), cross_process=False)))
        self.assertIsNotNone(peerlink._bundle.executable(), "the staged package has no bin/peerlink")
        self.assertNotIn("cross_process_not_probed", codes(verify_file(fixture("rtx4090x2"))))

    def test_bad_arguments_are_usage_errors(self) -> None:
        cases = [
            ({"devices": [0, 4]}, r"^GPU 4 does not exist: this process sees 4 GPU\(s\), 0..3$"),
            ({"devices": [1, 1]}, r"^GPU 1 is listed twice$"),
            ({"devices": [-1]}, r"^GPU -1 does not exist"),
            ({"devices": []}, r"^devices=\[\]: name at least one GPU"),
            ({"devices": "01"}, r"^devices='01': give CUDA ordinals as integers"),
            ({"devices": [0.5]}, r"give CUDA ordinals as integers"),
            ({"timeout_ms": 0}, r"^timeout_ms=0: give an integer in 1..3600000"),
            ({"timeout_ms": 3_600_001}, r"^timeout_ms=3600001"),
            ({"timeout_ms": True}, r"^timeout_ms=True"),
        ]
        for options, message in cases:
            with self.subTest(options=options):
                with self.assertRaisesRegex(peerlink.InvalidUsageError, message) as caught:
                    verify_file(fixture("h200x4_vm"), **options)
                self.assertEqual(caught.exception.code, peerlink.ErrorCode.INVALID_USAGE)
                self.assertIsInstance(caught.exception, ValueError)

    def test_a_malformed_setting_names_the_variable(self) -> None:
        with environment(PEERLINK_DOCTOR_CACHE="sometimes"):
            with self.assertRaisesRegex(peerlink.InvalidUsageError, r"PEERLINK_DOCTOR_CACHE='sometimes'"):
                verify_file(fixture("h200x4_vm"))

    def test_a_missing_topology_file_is_an_input_error(self) -> None:
        with self.assertRaisesRegex(peerlink.InvalidInputError, r"^topology file /no/such.json: cannot open"):
            verify_file("/no/such.json")

    def test_results_compare_and_print(self) -> None:
        first = verify_file(fixture("rtx4090x2"))
        second = verify_file(fixture("rtx4090x2"))
        self.assertEqual(first.pairs, second.pairs)
        self.assertEqual(str(first.overall), "OK")
        self.assertNotIn("topology=", repr(first))  # the topology is left out of the summary


class CachedVerdictsTest(CacheTestCase):
    def test_an_empty_cache_says_why_nothing_was_found(self) -> None:
        cached = peerlink.cached_verdicts(peerlink.topology(fixture("dual_socket_pcie")))
        self.assertEqual(cached.pairs, ())
        self.assertEqual(cached.directory, str(self.cache))
        self.assertIn(f"none cached in {self.cache}", cached.absence)
        self.assertFalse(cached.usable(0, 1))

    def test_the_cache_turned_off_is_said(self) -> None:
        with environment(PEERLINK_DOCTOR_CACHE="off"):
            cached = peerlink.cached_verdicts(peerlink.topology(fixture("dual_socket_pcie")))
        self.assertEqual((cached.pairs, cached.directory), ((), ""))
        self.assertIn("PEERLINK_DOCTOR_CACHE=off", cached.absence)

    def test_cached_verdicts_are_read_back(self) -> None:
        path = fixture("dual_socket_pcie")
        self.seed(path, 1, 2, "BROKEN", "ce_write_dropped")
        self.seed(path, 2, 1, "DEGRADED", "sm_read_slow")
        topology = peerlink.topology(path)
        cached = peerlink.cached_verdicts(topology)
        self.assertEqual(cached.absence, "")
        self.assertEqual(
            sorted(cached.pairs, key=lambda p: (p.src, p.dst)),
            [peerlink.PairVerdict(1, 2, Verdict.BROKEN, ("ce_write_dropped",)),
             peerlink.PairVerdict(2, 1, Verdict.DEGRADED, ("sm_read_slow",))])
        self.assertFalse(cached.usable(1, 2))
        self.assertTrue(cached.usable(2, 1))
        self.assertIsNone(cached.verdict(0, 1))
        self.assertEqual(cached.topology.gpus, topology.gpus)
        # This machine's topology is the file's when PEERLINK_TOPO_FILE names it.
        with environment(PEERLINK_TOPO_FILE=str(path)):
            self.assertEqual(peerlink.cached_verdicts().pairs, cached.pairs)

    def test_another_machine_finds_nothing(self) -> None:
        self.seed(fixture("dual_socket_pcie"), 1, 2, "BROKEN", "ce_write_dropped")
        self.assertEqual(peerlink.cached_verdicts(peerlink.topology(fixture("h200x4_vm"))).pairs, ())


if __name__ == "__main__":
    unittest.main()
