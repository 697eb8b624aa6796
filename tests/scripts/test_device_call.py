#!/usr/bin/env python3
"""scripts/device/call.sh on the CPU: a checkout with a fake dist/ (a `peerlink` and a GoogleTest executable
that only say how they were called) runs calls as the GPU machine would, and the tests read what the call
packed into $OUT. Run by ctest (cpu.scripts.DeviceCall)."""
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

FAKE_PEERLINK = """#!/usr/bin/env bash
# Says how it was called; writes the --json file it is given; fails when FAKE_FAIL is set.
if [ "$1" = --version ]; then echo "peerlink 0.1.0 (fake)"; exit 0; fi
echo "args: $*"
echo "PEERLINK_COLL_PUSH=${PEERLINK_COLL_PUSH:-unset}"
while [ $# -gt 0 ]; do
  if [ "$1" = --json ]; then echo '{"fake": true}' >"$2"; fi
  shift
done
cat <<'TABLE'
# == peerlink_graph: peerlink, the timed iterations captured in a CUDA graph
     4194304       1048576     float     sum      -1    24.23  173.1  259.7       0    24.50  171.2  256.8       0
# == peerlink vs the best NCCL configuration at each size, out-of-place (ratio = ...)
     4194304     30.10     24.23     31.65  nccl_symmetric    1.05     1.31  two_shot (two_shot): ...
TABLE
exit ${FAKE_FAIL:-0}
"""

FAKE_TEST = """#!/usr/bin/env bash
echo "filter: $*"
echo "[  PASSED  ] 1 test."
"""


class DeviceCall(unittest.TestCase):
    def setUp(self):
        self.tree = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.tree, "scripts", "device"))
        for name in ("call.sh", "call-lib.sh", "unpack-dist.sh"):
            shutil.copy(os.path.join(ROOT, "scripts", "device", name), os.path.join(self.tree, "scripts", "device"))
        os.makedirs(os.path.join(self.tree, "dist", "tests"))
        self.write("dist/peerlink", FAKE_PEERLINK, executable=True)
        self.write("dist/tests/gpu_test_fake", FAKE_TEST, executable=True)
        self.write("dist/SOURCE_DIR", self.tree + "\n")
        self.out = os.path.join(self.tree, "out")
        os.makedirs(self.out)
        self.name = "t%d" % os.getpid()

    def tearDown(self):
        shutil.rmtree(self.tree, ignore_errors=True)
        shutil.rmtree("/tmp/call-" + self.name, ignore_errors=True)

    def write(self, path, text, executable=False):
        full = os.path.join(self.tree, path)
        with open(full, "w") as f:
            f.write(text)
        if executable:
            os.chmod(full, 0o755)

    def pack_tests(self, path, name):
        """A fake test executable `name` in one tar in one xz stream at `path`, as pack-call.sh packs them."""
        archive = io.BytesIO()
        with tarfile.open(fileobj=archive, mode="w") as tar:
            data = FAKE_TEST.encode()
            member = tarfile.TarInfo(name)
            member.size = len(data)
            member.mode = 0o755
            tar.addfile(member, io.BytesIO(data))
        with open(os.path.join(self.tree, path), "wb") as f:
            f.write(subprocess.run(["xz", "-c"], input=archive.getvalue(), capture_output=True).stdout)

    def call(self, *steps, env=None):
        environment = dict(os.environ, OUT=self.out, PEERLINK_NCCL_LIBRARY="/nowhere/libnccl.so.2")
        environment.update(env or {})
        return subprocess.run(["bash", "scripts/device/call.sh", self.name, *steps], cwd=self.tree,
                              env=environment, capture_output=True, text=True, timeout=60)

    def packed(self):
        """The files the call packed into $OUT, by name, as text."""
        with tarfile.open(os.path.join(self.out, "call-%s.tar.gz" % self.name)) as tar:
            return {os.path.basename(m.name): tar.extractfile(m).read().decode()
                    for m in tar.getmembers() if m.isfile()}

    def test_steps_run_in_order_with_their_own_environment_and_are_recorded(self):
        result = self.call("coll ar 30 -o all_reduce -b 4M -e 4M",
                           "PEERLINK_COLL_PUSH=1 coll ar-push 30 -o all_reduce -b 4M -e 4M --no-nccl",
                           "test fake 30 gpu_test_fake --gtest_filter=*PUSH*")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        files = self.packed()
        self.assertIn("args: coll -o all_reduce -b 4M -e 4M --json /tmp/call-%s/ar.json" % self.name, files["ar.txt"])
        self.assertIn("PEERLINK_COLL_PUSH=unset", files["ar.txt"])
        self.assertIn("PEERLINK_COLL_PUSH=1", files["ar-push.txt"])
        self.assertEqual(files["ar.json"].strip(), '{"fake": true}')
        self.assertIn("filter: --gtest_filter=*PUSH*", files["fake.txt"])  # not globbed
        self.assertIn("scripts/device/call.sh %s 'coll ar 30 -o all_reduce -b 4M -e 4M' 'PEERLINK_COLL_PUSH=1 coll"
                      % self.name, files["call.txt"])
        self.assertIn("peerlink 0.1.0 (fake)", files["call.txt"])
        # One line per step: the coll summary gives the graph's ratio to NCCL's best per size.
        self.assertIn("ar: exit 0 in ", result.stdout)
        self.assertIn("4194304:1.31x", result.stdout)
        self.assertIn("fake: exit 0", result.stdout)

    def test_a_failed_step_fails_the_call_and_the_steps_after_it_still_run(self):
        result = self.call("FAKE_FAIL=5 coll bad 30 -o reduce", "coll good 30 -o reduce")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("bad: exit 5", result.stdout)
        self.assertIn("good: exit 0", result.stdout)
        self.assertIn("good.txt", self.packed())

    def test_binaries_carried_compressed_are_unpacked(self):
        os.makedirs(os.path.join(self.tree, "dist", "extra"))
        for name in ("peerlink", "peerlink-old"):
            with open(os.path.join(self.tree, "dist", "extra", name + ".xz"), "wb") as f:
                f.write(subprocess.run(["xz", "-c"], input=FAKE_PEERLINK.encode(), capture_output=True).stdout)
        os.remove(os.path.join(self.tree, "dist", "peerlink"))
        result = self.call("coll new 30 -o reduce", "run old 30 dist/extra/peerlink-old coll -o broadcast")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        files = self.packed()
        self.assertIn("args: coll -o reduce --json", files["new.txt"])
        self.assertIn("args: coll -o broadcast", files["old.txt"])

    def test_what_pack_call_compressed_is_unpacked(self):
        # pack-call.sh leaves the CLI, the NCCL library and the test executables compressed.
        def compress(path, text):
            with open(os.path.join(self.tree, path), "wb") as f:
                f.write(subprocess.run(["xz", "-c"], input=text.encode(), capture_output=True).stdout)
        os.makedirs(os.path.join(self.tree, "dist", "nccl_api"))
        os.makedirs(os.path.join(self.tree, "dist", "xz"))
        compress("dist/peerlink.xz", FAKE_PEERLINK)
        compress("dist/nccl_api/libpeerlink_nccl.so.2.xz", "a library\n")
        self.pack_tests("dist/xz/tests.tar.xz", "gpu_test_packed")
        os.remove(os.path.join(self.tree, "dist", "peerlink"))
        result = self.call("coll new 30 -o reduce", "test packed 30 gpu_test_packed --gtest_filter=A*")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        files = self.packed()
        self.assertIn("args: coll -o reduce --json", files["new.txt"])
        self.assertIn("filter: --gtest_filter=A*", files["packed.txt"])
        library = os.path.join(self.tree, "dist", "nccl_api", "libnccl.so.2")
        self.assertEqual(os.readlink(library), "libpeerlink_nccl.so.2")
        with open(library) as f:
            self.assertEqual(f.read(), "a library\n")

    def test_another_builds_tests_run_with_their_source_folder_linked(self):
        # pack-call.sh's PACK_ALT_TESTS: dist/ALT/xz/tests.tar.xz, the build's source folder in dist/ALT/SOURCE_DIR.
        alt_source = os.path.join(self.tree, "elsewhere", "alt")
        os.makedirs(os.path.join(self.tree, "dist", "alt", "xz"))
        os.makedirs(os.path.join(self.tree, "dist", "alt", "nccl_api"))
        os.makedirs(os.path.join(self.tree, "tests"))
        self.write("dist/alt/SOURCE_DIR", alt_source + "\n")
        self.pack_tests("dist/alt/xz/tests.tar.xz", "gpu_test_alt")
        result = self.call("test other 30 alt/gpu_test_alt --gtest_filter=B*")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("filter: --gtest_filter=B*", self.packed()["other.txt"])
        self.assertEqual(os.path.realpath(os.path.join(alt_source, "build", "nccl_api")),
                         os.path.realpath(os.path.join(self.tree, "dist", "alt", "nccl_api")))
        self.assertEqual(os.path.realpath(os.path.join(alt_source, "tests")),
                         os.path.realpath(os.path.join(self.tree, "tests")))

    def test_a_malformed_step_stops_the_call_before_anything_runs(self):
        for step, reason in (("coll ar", "needs LOG LIMIT_S"), ("colll ar 30", "unknown kind 'colll'"),
                             ("coll a/b 30", "log name 'a/b'"), ("coll ar 1m", "time limit '1m'"),
                             ("create c x", "process count")):
            result = self.call("coll first 30 -o all_reduce", step)
            self.assertEqual(result.returncode, 2, step)
            self.assertIn(reason, result.stderr, step)
            self.assertFalse(os.path.exists(os.path.join(self.out, "call-%s.tar.gz" % self.name)), step)


if __name__ == "__main__":
    unittest.main()
