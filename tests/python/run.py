"""Runs the Python package's tests against the package on PYTHONPATH (CMake stages it in <build>/python).

    run.py cpu   the tests that need no GPU (topology and doctor fixtures), test_cpu_*.py
    run.py gpu   the tests on this machine's GPUs, test_gpu_*.py

Every skipped test is printed as GoogleTest prints one, so scripts/test.sh lists its reason with the others;
the exit code is 77 when every test was skipped (CTest's SKIP_RETURN_CODE: reported as Skipped), 1 when one failed.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1] not in ("cpu", "gpu"):
        print(f"usage: {sys.argv[0]} cpu|gpu", file=sys.stderr)
        return 2
    # Only the tests' own settings count: a PEERLINK_* variable of the caller's shell would change verdicts.
    for name in list(os.environ):
        if name.startswith("PEERLINK_") and not name.startswith("PEERLINK_TEST_"):
            del os.environ[name]
    sys.path.insert(0, HERE)
    suite = unittest.defaultTestLoader.discover(HERE, pattern=f"test_{sys.argv[1]}_*.py", top_level_dir=HERE)
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
    for test, reason in result.skipped:
        print(f"{test.id()}: Skipped\n{reason}\n[  SKIPPED ] {test.id()} (0 ms)")
    if not result.wasSuccessful():
        return 1
    if result.testsRun == 0:
        print("no test ran", file=sys.stderr)
        return 1
    return 77 if len(result.skipped) == result.testsRun else 0


if __name__ == "__main__":
    sys.exit(main())
