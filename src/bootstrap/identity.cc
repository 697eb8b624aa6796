#include "bootstrap/identity.hpp"

#include <unistd.h>

#include <climits>
#include <fstream>

#include <fmt/format.h>

#include "bootstrap/hello.hpp"
#include "core/text.hpp"

namespace peerlink::bootstrap {

std::uint64_t fnv1a64(std::string_view text, std::uint64_t seed) {
  std::uint64_t hash = seed;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::uint64_t hostIdFor(const std::string& hostName, const std::string& bootId, const std::string& override) {
  if (!override.empty()) return fnv1a64("hostid:" + override);
  return fnv1a64("host:" + hostName + "\nboot:" + bootId);
}

std::uint64_t pidScopeFor(const std::string& bootId, const std::string& pidNamespace) {
  return fnv1a64("boot:" + bootId + "\npidns:" + pidNamespace);
}

std::string readBootId() {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string line;
  std::getline(file, line);
  return trimSpace(line);
}

std::string localHostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "unknown-host";
  std::string host(name);
  for (char& c : host) {
    if (c < ' ' || c > '~') c = '?';
  }
  return host.substr(0, kHostNameBytes - 1);
}

std::uint64_t localPidScope() {
  char target[256] = {};
  const ssize_t length = ::readlink("/proc/self/ns/pid", target, sizeof(target) - 1);
  const std::string pidNamespace = length > 0 ? std::string(target, static_cast<std::size_t>(length)) : "";
  // Unknown namespace or boot: a scope of this process alone, so no peer's pid is ever watched by mistake.
  if (pidNamespace.empty()) return fnv1a64(fmt::format("alone:{}", ::getpid()));
  return pidScopeFor(readBootId(), pidNamespace);
}

std::string describeRanks(const std::vector<int>& ranks) {
  return fmt::format("rank{} {}", plural(ranks.size()), fmt::join(ranks, ", "));
}

std::string formatSeconds(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  if (ms < 1000) return fmt::format("{} ms", ms);
  if (ms % 1000 == 0) return fmt::format("{} s", ms / 1000);
  return fmt::format("{:g} s", static_cast<double>(ms) / 1000.0);
}

std::string formatRankRanges(const std::vector<int>& ranks) {
  if (ranks.empty()) return "none";
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (begin < ranks.size()) {
    std::size_t end = begin;
    while (end + 1 < ranks.size() && ranks[end + 1] == ranks[end] + 1) ++end;
    parts.push_back(end == begin ? fmt::format("{}", ranks[begin]) : fmt::format("{}-{}", ranks[begin], ranks[end]));
    begin = end + 1;
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace peerlink::bootstrap

namespace peerlink {

std::string describePeer(const PeerIdentity& peer) {
  return fmt::format("rank {} (host {}, pid {})", peer.rank, peer.hostName, peer.pid);
}

PeerIdentity localPeerIdentity(int rank, const BootstrapOptions& options) {
  PeerIdentity identity;
  identity.rank = rank;
  identity.hostName = bootstrap::localHostName();
  identity.hostId = bootstrap::hostIdFor(identity.hostName, bootstrap::readBootId(), options.hostId);
  identity.pid = static_cast<std::int32_t>(::getpid());
  identity.uid = static_cast<std::uint32_t>(::geteuid());
  return identity;
}

}  // namespace peerlink
