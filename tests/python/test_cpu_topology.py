"""peerlink.topology() from the topology fixtures: every field of the library's JSON reaches Python."""

import dataclasses
import json
import tempfile
import unittest
from pathlib import Path

import peerlink
from support import environment, fixture, run_python, topology_fixtures

# Keys of the JSON's top level that describe the file rather than the machine.
FILE_KEYS = {"schema", "version"}


class TopologyTest(unittest.TestCase):
    def assert_mirrors(self, value, document, where: str, top: bool = False) -> None:
        """`value` (a dataclass, tuple or scalar) holds exactly what `document` (parsed JSON) holds."""
        if isinstance(document, dict):
            self.assertTrue(dataclasses.is_dataclass(value), f"{where}: {value!r} is not a dataclass")
            # An optional part the document leaves out (a GPU whose readings all succeeded) is None here.
            names = {
                f.name
                for f in dataclasses.fields(value)
                if f.repr and not (getattr(value, f.name) is None and f.name not in document)
            }
            keys = set(document) - (FILE_KEYS if top else set())
            self.assertEqual(keys, names, f"{where}: the JSON's keys and the class's fields differ")
            for key in keys:
                self.assert_mirrors(getattr(value, key), document[key], f"{where}.{key}")
        elif isinstance(document, list):
            self.assertIsInstance(value, tuple, where)
            self.assertEqual(len(value), len(document), where)
            for index, (item, entry) in enumerate(zip(value, document)):
                self.assert_mirrors(item, entry, f"{where}[{index}]")
        else:
            self.assertEqual(value, document, where)
            self.assertIs(type(value), type(document), where)

    def test_every_fixture_mirrors_the_library_json(self) -> None:
        for path in topology_fixtures():
            with self.subTest(fixture=str(path)):
                topology = peerlink.topology(path)
                self.assertEqual(topology.source, str(path))
                self.assert_mirrors(topology, json.loads(topology.to_json()), path.name, top=True)
                count = len(topology.gpus)
                self.assertEqual(len(topology.pairs), count * (count - 1))
                self.assertEqual([gpu.cuda_ordinal for gpu in topology.gpus], list(range(count)))

    def test_pair_finds_every_ordered_pair(self) -> None:
        topology = peerlink.topology(fixture("h100x8_nvswitch"))
        for src in range(8):
            for dst in range(8):
                if src == dst:
                    with self.assertRaises(KeyError):
                        topology.pair(src, dst)
                    continue
                pair = topology.pair(src, dst)
                self.assertEqual((pair.src, pair.dst), (src, dst))
        with self.assertRaisesRegex(KeyError, r"no pair 0 -> 8 \(8 GPUs, 0..7\)"):
            topology.pair(0, 8)

    def test_links_read_as_nvidia_smi_writes_them(self) -> None:
        self.assertEqual(peerlink.topology(fixture("h200x4_vm")).pair(0, 3).link, "NV18")
        pcie = peerlink.topology(fixture("dual_socket_pcie"))
        self.assertEqual(pcie.pair(1, 2).link, "PIX")
        self.assertEqual(pcie.pair(0, 3).link, "SYS")
        self.assertFalse(peerlink.topology(fixture("rtx4090x2")).pair(0, 1).can_access_peer)

    def test_the_file_variable_replaces_discovery(self) -> None:
        with environment(PEERLINK_TOPO_FILE=str(fixture("rtx4090x2"))):
            topology = peerlink.topology()
        self.assertEqual(topology.host, "workstation")
        self.assertEqual(len(topology.gpus), 2)

    def test_to_json_reads_back(self) -> None:
        topology = peerlink.topology(fixture("a6000x8_nvlink_bridges"))
        with tempfile.TemporaryDirectory() as folder:
            saved = Path(folder) / "saved.json"
            saved.write_text(topology.to_json())
            again = peerlink.topology(saved)
        self.assertEqual(again.gpus, topology.gpus)
        self.assertEqual(again.pairs, topology.pairs)
        self.assertEqual(peerlink.Topology.from_json(topology.to_json()), topology)

    def test_discovery_without_a_gpu_is_a_typed_error(self) -> None:
        # A process of its own, since CUDA reads CUDA_VISIBLE_DEVICES once: none visible there, GPU or not.
        done = run_python(
            ["-c", "import peerlink\ntry:\n peerlink.topology()\nexcept peerlink.NoDeviceError as e:\n"
                   " print(type(e).__name__, int(e.code), e)"],
            {"CUDA_VISIBLE_DEVICES": "-1"})
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertRegex(done.stdout, r"^NoDeviceError 3 no CUDA GPU")


if __name__ == "__main__":
    unittest.main()
