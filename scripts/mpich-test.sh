#!/usr/bin/env bash
# The transport between nodes over MPICH, beside the Open MPI the project installs: MPICH's packages are fetched
# with apt-get download and unpacked into a temporary folder (nothing is installed: the machine's mpicc and mpirun
# stay Open MPI's), libpeerlink_mpi.so and tests/mpi/net_e2e.cc are compiled against MPICH's headers (its MPI_Comm
# is an int where Open MPI's is a pointer), and 4 ranks as 2 nodes x 2 (PEERLINK_HOSTID) run every hierarchical
# collective under MPICH's mpiexec, and the refusal of an MPI that is not initialized. Then tests/mpi/launch_mpi_e2e
# (built with the build; it links no MPI) initializes MPICH through that library, as `peerlink coll` does.
#
#   scripts/mpich-test.sh [build]      (after the build: links build/libpeerlink.a)
#
# Skips (exit 0, saying why) where the packages cannot be fetched.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
skip() {
  echo "mpich-test: SKIPPED: $*"
  exit 0
}
[ -f "$build/libpeerlink.a" ] || skip "$build/libpeerlink.a is not built"
command -v apt-get >/dev/null && command -v dpkg >/dev/null || skip "no apt-get and dpkg (Debian packages)"
work=$(mktemp -d /tmp/peerlink-mpich.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
# hydra (MPICH's mpiexec) links libslurm; Debian names it by its soname.
slurm=$(apt-cache depends mpich 2>/dev/null | sed -n 's/.*Depends: \(libslurm[0-9]*\)$/\1/p' || true)
slurm=${slurm%%$'\n'*}
if ! apt-get download libmpich-dev libmpich12 mpich ${slurm:+"$slurm"} >download.log 2>&1; then
  skip "apt-get download of MPICH's packages failed: $(tail -1 download.log)"
fi
for deb in ./*.deb; do dpkg -x "$deb" root; done
root=$work/root
include=$(dirname "$(find "$root" -name mpi.h -path '*mpich*' -print -quit)")
lib=$(dirname "$(find "$root" -name 'libmpich.so' -print -quit)")
export PATH=$root/usr/bin:$PATH LD_LIBRARY_PATH=$lib
cd - >/dev/null
cuda=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
flags=(-std=c++17 -O1 -Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion -Werror -DMPICH_SKIP_MPICXX=1 -I"$include"
       -Isrc -Itests)
g++ "${flags[@]}" -fPIC -shared -fvisibility=hidden src/net/mpi_shim/peerlink_mpi.cc -L"$lib" -lmpich \
  -o "$work/libpeerlink_mpi.so"
g++ "${flags[@]}" -Iinclude -I"$build/generated" -I"$cuda/include" tests/mpi/net_e2e.cc \
  "$build/libpeerlink.a" -L"$cuda/lib64" -lcudart_static -ldl -lpthread -lrt -L"$lib" -lmpich \
  -o "$work/net_e2e"
version=$("$root/usr/bin/mpichversion" 2>/dev/null || true)
echo "mpich-test: built against $(echo "${version%%$'\n'*}" | tr -s ' \t' ' ')"

mkdir -p "$work/out"
status=0
timeout 120 mpiexec.hydra -launcher fork -n 4 -genv PEERLINK_NET_CHUNK_BYTES 65536 \
  sh -c "PEERLINK_HOSTID=node\$((PMI_RANK / 2)) exec $work/net_e2e collectives $work/out" >"$work/run.log" 2>&1 ||
  status=$?
sed 's/^/  /' "$work/run.log" | tail -6
ok=$(grep -c "^ok 108 hierarchical collectives on 2 nodes x 2" "$work"/out/rank*.txt 2>/dev/null | awk -F: '{s+=$2} END {print s+0}')
refusal=$("$work/net_e2e" uninitialized "$work/out" || true)
echo "  $refusal"
if [ "$status" != 0 ] || [ "$ok" != 4 ] || [[ "$refusal" != "InvalidUsage: MPI is not initialized (MPICH"* ]]; then
  echo "mpich-test: FAILED (mpiexec exited $status, $ok of 4 ranks ok)"
  exit 1
fi
launched=$build/tests/mpi/mpi_launch_e2e
if [ -x "$launched" ]; then
  mkdir -p "$work/launched"
  status=0
  timeout 120 mpiexec.hydra -launcher fork -n 4 -genv PEERLINK_MPI_LIBRARY "$work/libpeerlink_mpi.so" \
    sh -c "PEERLINK_HOSTID=node\$((PMI_RANK / 2)) exec $launched reference $work/launched" >"$work/launched.log" 2>&1 ||
    status=$?
  sed 's/^/  /' "$work/launched.log" | tail -4
  ok=$(cat "$work"/launched/rank*.txt 2>/dev/null | grep -c "^ok MPI initialized here (MPICH.*) and finalized" || true)
  if [ "$status" != 0 ] || [ "$ok" != 4 ]; then
    echo "mpich-test: FAILED (MPI initialized through libpeerlink_mpi.so: mpiexec exited $status, $ok of 4 ranks ok)"
    exit 1
  fi
else
  echo "  $launched is not built: MPI initialized through libpeerlink_mpi.so not run"
fi
echo "mpich-test: passed"
