"""What the package carries beside its modules: the NCCL-API library's path (or why there is none) and the
`peerlink` program behind `python -m peerlink`."""

import os
import tempfile
import unittest
from pathlib import Path

import peerlink
from peerlink import _bundle
from support import fixture, run_python


class NcclLibraryTest(unittest.TestCase):
    def test_the_package_reports_what_its_build_had(self) -> None:
        built = os.environ.get("PEERLINK_TEST_NCCL_BUILT")
        if built is None:
            self.skipTest("PEERLINK_TEST_NCCL_BUILT is not set (CTest sets it: whether nccl_api/ was built)")
        library = peerlink.find_nccl_library()
        if built == "1":
            self.assertEqual(library.path, str(_bundle.LIB_DIR / "libpeerlink_nccl.so.2"))
            self.assertEqual(library.reason, "")
            self.assertTrue(Path(library.path).is_file())
        else:
            self.assertIsNone(library.path)
            self.assertIn("built without the NCCL-API library", library.reason)
        self.assertEqual(peerlink.nccl_library_path(), library.path)

    def test_a_folder_with_the_library(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "libpeerlink_nccl.so.2"
            path.write_bytes(b"\x7fELF")
            self.assertEqual(peerlink.find_nccl_library(folder), peerlink.NcclLibrary(str(path)))

    def test_a_folder_without_it_says_why(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            library = peerlink.find_nccl_library(folder)
            self.assertIsNone(library.path)
            self.assertTrue(library.reason.startswith(f"{folder}/libpeerlink_nccl.so.2 does not exist: "), library)
            (Path(folder) / "libpeerlink_nccl.so.2").mkdir()
            self.assertEqual(peerlink.find_nccl_library(folder).reason,
                             f"{folder}/libpeerlink_nccl.so.2 is not a regular file")


class CommandTest(unittest.TestCase):
    def test_python_m_peerlink_runs_the_carried_program(self) -> None:
        done = run_python(["-m", "peerlink", "topo", "--topo-file", str(fixture("rtx4090x2"))], {})
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(done.stdout.startswith("peerlink topo: 2 GPUs on workstation"), done.stdout)
        version = run_python(["-m", "peerlink", "--version"], {})
        self.assertEqual(version.stdout.strip(), f"peerlink {peerlink.__version__} (commit {peerlink.git_commit})")

    def test_its_exit_codes_are_the_programs(self) -> None:
        done = run_python(["-m", "peerlink", "topo", "--topo-file", "/no/such.json"], {})
        self.assertEqual(done.returncode, 2)
        self.assertIn("peerlink: topology file /no/such.json: cannot open", done.stderr)

    def test_nccl_path_prints_the_library_or_why_not(self) -> None:
        done = run_python(["-m", "peerlink", "nccl-path"], {})
        library = peerlink.find_nccl_library()
        if library.path is None:
            self.assertEqual((done.returncode, done.stdout), (1, ""))
            self.assertEqual(done.stderr.strip(), f"peerlink: no NCCL-API library: {library.reason}")
        else:
            self.assertEqual((done.returncode, done.stdout.strip()), (0, library.path))


if __name__ == "__main__":
    unittest.main()
