#!/usr/bin/env bash
# Prepares the Python that builds and tests the Python package (python/): a virtual environment of this
# machine's python3 in build/python-env with nanobind, the binding library of the native module. Prints the
# interpreter's path; scripts/test.sh gives it to CMake (-DPEERLINK_PYTHON=ON -DPython_EXECUTABLE=...).
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian's python3 needs these for a virtual environment and for building a module; other pythons ship both.
./scripts/install-missing.sh python3 python3-dev python3-venv

env=build/python-env
if [ ! -x "$env/bin/python" ]; then
  mkdir -p build
  python3 -m venv "$env" >&2
fi
if ! "$env/bin/python" -c "import nanobind" 2>/dev/null; then
  "$env/bin/python" -m pip install --quiet --disable-pip-version-check "nanobind>=2.4,<4" >&2
fi
echo "$PWD/$env/bin/python"
