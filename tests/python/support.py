"""What the Python package's tests share: where the fixtures are, environment changes undone after each test, a
verdict cache of the test's own, and the verdict-cache seeding helper CMake builds."""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Dict, Iterator, List, Optional

SOURCE_DIR = Path(os.environ.get("PEERLINK_TEST_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FIXTURES = SOURCE_DIR / "tests" / "fixtures"
TOPOLOGIES = FIXTURES / "topologies"
EXAMPLES = SOURCE_DIR / "examples"


def topology_fixtures() -> List[Path]:
    """Every saved topology of the fixtures: tests/fixtures/topologies and the doctor's platforms that have one."""
    files = sorted(TOPOLOGIES.glob("*.json")) + sorted((FIXTURES / "doctor").glob("*/topology.json"))
    assert files, f"no topology fixtures under {FIXTURES}"
    return files


def fixture(name: str) -> Path:
    return TOPOLOGIES / f"{name}.json"


def _apply(variables: Dict[str, Optional[str]]) -> None:
    for name, value in variables.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@contextlib.contextmanager
def environment(**variables: Optional[str]) -> Iterator[None]:
    """Sets (a value) or removes (None) environment variables for the block, then puts them back."""
    saved: Dict[str, Optional[str]] = {name: os.environ.get(name) for name in variables}
    try:
        _apply(variables)
        yield
    finally:
        _apply(saved)


class CacheTestCase(unittest.TestCase):
    """A test whose doctor verdict cache is a folder of its own (PEERLINK_DOCTOR_CACHE_DIR), removed afterwards."""

    def setUp(self) -> None:
        self.cache = Path(tempfile.mkdtemp(prefix="peerlink-python-cache-"))
        self.addCleanup(shutil.rmtree, self.cache, True)
        context = environment(PEERLINK_DOCTOR_CACHE_DIR=str(self.cache))
        context.__enter__()
        self.addCleanup(context.__exit__, None, None, None)

    def seed(self, topology_file: Path, src: int, dst: int, verdict: str, reason: str) -> None:
        """Caches `verdict` for src -> dst of the file under this boot, as `peerlink doctor` would have."""
        tool = os.environ.get("PEERLINK_TEST_SEED_CACHE")
        if not tool:
            self.skipTest("PEERLINK_TEST_SEED_CACHE is not set (run through CTest, which builds the helper)")
        done = subprocess.run([tool, str(topology_file), str(src), str(dst), verdict, reason],
                              capture_output=True, text=True, timeout=60)
        if done.returncode == 3:
            self.skipTest(f"nothing can be cached on this machine: {done.stderr.strip()}")
        self.assertEqual(done.returncode, 0, done.stderr)


def run_python(args: List[str], env: Dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    """This interpreter on `args`, with `env` added to this process's environment."""
    return subprocess.run([sys.executable, *args], env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=timeout)
