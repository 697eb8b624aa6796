// Who this process is, as a bootstrap hello says: the host id that tells which ranks share a machine, and the
// pid scope that tells where a peer's pid names a process this one can watch. Also the text that names ranks in
// messages.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "peerlink/bootstrap.hpp"

namespace peerlink::bootstrap {

/// FNV-1a, 64 bits: stable across builds and machines (std::hash is neither), for ids, not for secrets.
std::uint64_t fnv1a64(std::string_view text, std::uint64_t seed = 0xcbf29ce484222325ull);

/// The host id of a machine: a hash of `override` when it is not empty (PEERLINK_HOSTID), else of the host name
/// and the boot id (so two containers of one hostname on different machines differ, and a machine that
/// rebooted is another host).
std::uint64_t hostIdFor(const std::string& hostName, const std::string& bootId, const std::string& override);

/// The pid scope: a hash of the boot id and the pid namespace (/proc/self/ns/pid's target). Two processes
/// whose scopes are equal see each other's pids.
std::uint64_t pidScopeFor(const std::string& bootId, const std::string& pidNamespace);

/// This machine's boot id (/proc/sys/kernel/random/boot_id), empty where it cannot be read.
std::string readBootId();
/// gethostname(), cut to what a hello carries.
std::string localHostName();
/// pidScopeFor this process.
std::uint64_t localPidScope();

/// "ranks 3, 7" or "rank 3".
std::string describeRanks(const std::vector<int>& ranks);
/// "0-2, 4-6"; "none" when empty.
std::string formatRankRanges(const std::vector<int>& ranks);
/// "30 s", "1.5 s", "250 ms".
std::string formatSeconds(std::chrono::milliseconds duration);
/// "s" when `count` is not 1.
inline const char* plural(std::size_t count) {
  return count == 1 ? "" : "s";
}

}  // namespace peerlink::bootstrap
