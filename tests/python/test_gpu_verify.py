"""peerlink.verify_peers() on this machine's GPUs (at least two; skipped with the reason elsewhere): the probe
through Python, its cache shared with `peerlink doctor`, and a dropped flag caught by the deadline."""

import json
import subprocess
import unittest

import peerlink
from peerlink import Verdict, _bundle
from support import CacheTestCase, environment

METHODS = {"ce_write", "ce_read", "sm_write", "sm_read", "flag_handshake", "ipc", "cumem"}


class VerifyPeersOnGpusTest(CacheTestCase):
    def setUp(self) -> None:
        super().setUp()
        try:
            self.gpus = len(peerlink.topology().gpus)
        except peerlink.NoDeviceError as error:
            self.skipTest(f"needs 2 GPUs: {error}")
        if self.gpus < 2:
            self.skipTest(f"needs 2 GPUs, this machine has {self.gpus}")

    def test_probes_every_pair_and_shares_the_cache_with_the_doctor(self) -> None:
        first = peerlink.verify_peers()
        pairs = self.gpus * (self.gpus - 1)
        self.assertEqual(len(first.pairs), pairs)
        self.assertEqual(first.cached_pairs, 0)
        self.assertEqual(first.cache_directory, str(self.cache))
        for pair in first.pairs:
            p2p = first.topology.pair(pair.src, pair.dst).can_access_peer
            self.assertEqual(pair.verdict == Verdict.UNSUPPORTED, not p2p, pair)
            if p2p:  # every method ran on the pair, IPC and cuMem through the program the package carries
                ran = {p.method for p in first.probes if (p.src, p.dst) == (pair.src, pair.dst) and p.ran}
                gpus = (first.topology.gpus[pair.src], first.topology.gpus[pair.dst])
                cumem = all(gpu.memory_handles.posix_fd for gpu in gpus)
                self.assertEqual(ran, METHODS if cumem else METHODS - {"cumem"}, pair)
        print(f"\nfirst call: {first.overall} in {first.seconds:.2f} s")

        second = peerlink.verify_peers()
        self.assertEqual((second.cached_pairs, second.probes), (pairs, ()))
        self.assertEqual(second.pairs, first.pairs)
        print(f"second call, from the cache: {second.seconds:.3f} s")
        self.assertEqual(peerlink.cached_verdicts().pairs, first.pairs)

        # `peerlink doctor --quick` asks with the same options, so the cache answers it too.
        done = subprocess.run([str(_bundle.executable()), "doctor", "--quick", "--json", "-"],
                              capture_output=True, text=True, timeout=300)
        report = json.loads(done.stdout)
        self.assertEqual(report["run"]["cached_pairs"], pairs, done.stderr)
        self.assertEqual({(p["src"], p["dst"]): p["verdict"] for p in report["pairs"]},
                         {(p.src, p.dst): str(p.verdict) for p in first.pairs})

    def test_without_the_cache_nothing_is_stored(self) -> None:
        result = peerlink.verify_peers([0, 1], use_cache=False)
        self.assertEqual({(p.src, p.dst) for p in result.pairs}, {(0, 1), (1, 0)})
        self.assertEqual(result.cache_directory, "")
        self.assertEqual(list(self.cache.iterdir()), [])

    def test_a_dropped_flag_is_broken_within_the_deadline(self) -> None:
        if not peerlink.topology().pair(0, 1).can_access_peer:
            self.skipTest("GPUs 0 and 1 have no P2P: the flag handshake does not run between them")
        with environment(PEERLINK_FAULT_DROP_FLAG="1"):
            result = peerlink.verify_peers([0, 1], timeout_ms=500, use_cache=False, cross_process=False)
        for pair in result.pairs:
            self.assertEqual(pair.verdict, Verdict.BROKEN, pair)
            self.assertIn("flag_handshake_timeout", pair.reasons)
        handshake = [p for p in result.probes if p.method == "flag_handshake"]
        self.assertTrue(handshake and all(p.timed_out for p in handshake), handshake)
        self.assertLess(result.seconds, 10.0)
        print(f"\ndropped flag: verdict in {result.seconds:.2f} s")


if __name__ == "__main__":
    unittest.main()
