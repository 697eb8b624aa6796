#!/usr/bin/env bash
# The transport between nodes on two real "hosts" without a cluster: two network namespaces joined by a veth link,
# each with its own hostname, and mpirun starting 2 ranks in each (Open MPI's rsh agent enters the namespace), so
# MPI and the peerlink bootstrap cross the link as they would cross a network. Runs tests/mpi/net_e2e.cc three
# times: every hierarchical collective against the closed forms; a rank killed (the others name it, no hang); the
# link cut (every rank names a rank of the other host within PEERLINK_NET_TIMEOUT_MS, no hang). Between the first
# and the faults, tests/mpi/launch_mpi_e2e.cc as `peerlink coll` starts across hosts: a program that links no MPI
# meets through the launch's bootstrap (PEERLINK_BOOTSTRAP_ADDR on the first host), MPI initialized through
# libpeerlink_mpi.so, MPI's own exchange on each rail checked byte by byte, MPI finalized.
#
#   scripts/net-test.sh [path/to/mpi_net_e2e]    (root; default build/tests/mpi/mpi_net_e2e; mpi_launch_e2e beside it)
#
# Skips (exit 0, saying why) where namespaces cannot be made (not root, no `ip`, no unshare) or the program or
# Open MPI's mpirun is missing. Everything it makes is removed on exit, whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."

program=$(realpath -m "${1:-build/tests/mpi/mpi_net_e2e}")
library=$(realpath -m "$(dirname "$program")/../../libpeerlink_mpi.so")
launched=$(dirname "$program")/mpi_launch_e2e
skip() {
  echo "net-test: SKIPPED: $*"
  exit 0
}
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip >/dev/null && command -v unshare >/dev/null || skip "no ip (iproute2) or unshare (util-linux)"
[ -x "$program" ] || skip "$program is not built (it needs MPI at configure time)"
[ -x "$launched" ] || skip "$launched is not built (it needs MPI at configure time)"
[ -f "$library" ] || skip "$library is not built (PEERLINK_WITH_MPI)"
mpirun --version 2>/dev/null | grep "Open MPI" >/dev/null || skip "the namespaces recipe needs Open MPI's mpirun"

# Names unique to this run, so that runs side by side do not meet (interface names: at most 15 characters).
id=$$
a=pla$id
b=plb$id
subnet=10.$((100 + id % 100)).$(((id / 100) % 250)).0
ipa=${subnet%.0}.1
ipb=${subnet%.0}.2
work=$(mktemp -d /tmp/peerlink-net-test.XXXXXX)

cleanup() {
  for ns in "$a" "$b"; do
    # What the runs left behind in the namespaces (a fault test's stuck daemons) goes with them.
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns delete "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
  rm -rf "$work"
}
trap cleanup EXIT

if ! ip netns add "$a" 2>"$work/err"; then skip "ip netns add is not permitted here: $(cat "$work/err")"; fi
ip netns add "$b"
ip link add "v$a" type veth peer name "v$b"
ip link set "v$a" netns "$a"
ip link set "v$b" netns "$b"
ip -n "$a" addr add "$ipa/24" dev "v$a"
ip -n "$b" addr add "$ipb/24" dev "v$b"
for ns in "$a" "$b"; do
  ip -n "$ns" link set lo up
  ip -n "$ns" link set "v$ns" up
  # `ip netns exec` mounts /etc/netns/NAME/hosts over /etc/hosts: each host finds the other by name.
  mkdir -p "/etc/netns/$ns"
  printf '127.0.0.1 localhost\n%s %s\n%s %s\n' "$ipa" "$a" "$ipb" "$b" >"/etc/netns/$ns/hosts"
done

# mpirun starts the other host's daemon through this agent: into that namespace, with that hostname.
cat >"$work/agent.sh" <<'EOF'
#!/bin/sh
host=$1
shift
exec ip netns exec "$host" unshare --uts sh -c "hostname $host; $*"
EOF
chmod +x "$work/agent.sh"
printf '%s slots=2\n%s slots=2\n' "$a" "$b" >"$work/hostfile"

# On 2 cores 4 ranks busy-poll: --oversubscribe and yield when idle. TCP only, on the veth subnet. PROGRAM: another
# program than mpi_net_e2e.
run() {
  local mode=$1 limit=$2 binary=${PROGRAM:-$program}
  shift 2
  rm -f "$work"/rank*.txt
  local started=$SECONDS status=0
  timeout -k 5 "$limit" ip netns exec "$a" unshare --uts sh -c "hostname $a; exec mpirun --allow-run-as-root \
      --oversubscribe --hostfile $work/hostfile -np 4 --mca plm_rsh_agent $work/agent.sh \
      --mca oob_tcp_if_include $subnet/24 --mca btl_tcp_if_include $subnet/24 --mca btl tcp,self,vader \
      --mca mpi_yield_when_idle 1 $* \
      -x PEERLINK_MPI_LIBRARY=$library -x PEERLINK_NET_CHUNK_BYTES=65536 -x PEERLINK_NET_TIMEOUT_MS=3000 \
      -x PEERLINK_BOOTSTRAP_TIMEOUT_MS=20000 -x NET_E2E_CUT='ip link set dev v$b down' \
      $binary $mode $work" >"$work/$mode.log" 2>&1 || status=$?
  echo "net-test: $mode: mpirun exited $status after $((SECONDS - started)) s"
}

failed=0
fail() {
  echo "net-test: FAILED: $*"
  sed 's/^/    /' "$work/$1.log" | tail -30
  failed=1
}
line() { cat "$work/rank$1.txt" 2>/dev/null || echo "(rank $1 wrote nothing)"; }

# 1. Every hierarchical collective, both hosts, against the closed forms.
run collectives 300
for r in 0 1 2 3; do
  echo "  rank $r: $(line "$r")"
  host=$([ "$r" -lt 2 ] && echo "$a" || echo "$b")
  line "$r" | grep "^ok .* on 2 nodes x 2 (host $host)" >/dev/null || fail collectives "rank $r"
done

# 2. A program that links no MPI, as `peerlink coll` across hosts: the launch's bootstrap at an address of host a,
# MPI initialized through libpeerlink_mpi.so on every rank, each rail's exchange right, MPI finalized.
PROGRAM=$launched run reference 120 -x PEERLINK_BOOTSTRAP_ADDR=$ipa:29500
for r in 0 1 2 3; do
  echo "  rank $r: $(line "$r")"
  host=$([ "$r" -lt 2 ] && echo "$a" || echo "$b")
  line "$r" | grep "^ok MPI initialized here (.*MPI_THREAD_MULTIPLE) and finalized; .* on 2 nodes x 2 (host $host)" \
    >/dev/null || fail reference "rank $r"
done

# 3. Rank 3 (host b) killed: the others name it, well before the deadline (the bootstrap sees it go). Without
# --enable-recovery the MPI runtime kills the survivors when it notices, which may be before they report; with
# it, mpirun waits on after they left, and is stopped at the limit.
run kill 10 --enable-recovery
for r in 0 1 2; do
  echo "  rank $r: $(line "$r")"
  line "$r" | grep "^fault RemoteError .*rank 3 (host $b, pid [0-9]*) exited" >/dev/null || fail kill "rank $r"
done

# 4. The link cut by rank 3 (last: the link stays down): every rank names a rank of the other host within the
# 3 s deadline.
# mpirun itself cannot end cleanly once its daemons lost each other: it is stopped at the limit (exit 124).
run unreachable 15
for r in 0 1 2 3; do
  echo "  rank $r: $(line "$r")"
  other=$([ "$r" -lt 2 ] && echo "$b" || echo "$a")
  line "$r" | grep -E "^fault (Timeout|RemoteError) after [0-9.]+ s: .*rank [0-9] \(host $other" >/dev/null ||
    fail unreachable "rank $r"
done

[ "$failed" = 0 ] && echo "net-test: passed" || exit 1
