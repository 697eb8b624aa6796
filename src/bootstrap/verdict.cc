#include "bootstrap/verdict.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bootstrap/hello.hpp"
#include "bootstrap/identity.hpp"
#include "bootstrap/wire.hpp"

namespace peerlink::bootstrap {
namespace {

// Hosts named in a reason; a world of many more says how many it left out.
constexpr std::size_t kHostsNamed = 4;

struct HostRanks {
  std::uint64_t hostId = 0;
  std::string name;
  std::vector<int> ranks;
};

}  // namespace

ServerVerdict chooseWorldServer(const std::vector<PeerIdentity>& ranks) {
  std::vector<HostRanks> hosts;  // in the order of their lowest rank
  std::vector<PeerIdentity> ordered = ranks;
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  for (const PeerIdentity& peer : ordered) {
    auto host = std::find_if(hosts.begin(), hosts.end(), [&](const HostRanks& h) { return h.hostId == peer.hostId; });
    if (host == hosts.end()) host = hosts.insert(hosts.end(), HostRanks{peer.hostId, peer.hostName, {}});
    host->ranks.push_back(peer.rank);
  }
  if (hosts.size() <= 1) {
    return {false,
            hosts.empty() ? std::string("no ranks") : fmt::format("every rank on one host ({})", hosts.front().name)};
  }
  std::vector<std::string> named;
  for (std::size_t i = 0; i < hosts.size() && i < kHostsNamed; ++i) {
    // Hosts made by PEERLINK_HOSTID on one machine share a name: their ids tell them apart.
    const bool shared = std::count_if(hosts.begin(), hosts.end(),
                                      [&](const HostRanks& other) { return other.name == hosts[i].name; }) > 1;
    named.push_back(fmt::format("{}{} ({} {})", hosts[i].name,
                                shared ? fmt::format(" [host id {:016x}]", hosts[i].hostId) : std::string(),
                                hosts[i].ranks.size() == 1 ? "rank" : "ranks", formatRankRanges(hosts[i].ranks)));
  }
  std::string reason = fmt::format("ranks on {} hosts: {}", hosts.size(), fmt::join(named, ", "));
  if (hosts.size() > kHostsNamed) reason += fmt::format(" and {} more", hosts.size() - kHostsNamed);
  return {true, reason};
}

std::vector<std::uint8_t> encodeForward(const std::string& reason, const std::vector<std::uint8_t>& ncclId) {
  std::size_t extent = ncclId.size();
  while (extent > 0 && ncclId[extent - 1] == 0) --extent;
  if (extent == 0) {
    throw Error(ErrorCode::InvalidUsage, ncclId.empty() ? std::string("the real NCCL gave an empty id")
                                                        : std::string("the real NCCL gave an id of zeros"));
  }
  if (extent > kMaxForwardIdBytes) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("the real NCCL gave an id of {} bytes, more than an ncclUniqueId's {}", extent,
                            kMaxForwardIdBytes));
  }
  WireWriter out;
  out.put(static_cast<std::uint8_t>(extent));
  out.putBytes(ncclId.data(), extent);
  out.putBytes(reason.data(), std::min(reason.size(), kMaxFailureText));
  return std::move(out.bytes());
}

Forward decodeForward(const std::uint8_t* data, std::size_t size) {
  WireReader in(data, size, "bootstrap forward message");
  const auto extent = in.get<std::uint8_t>("length of the real NCCL's id");
  if (extent == 0 || extent > kMaxForwardIdBytes) {
    in.fail(fmt::format("the real NCCL's id is said to be {} bytes (1 to {})", extent, kMaxForwardIdBytes));
  }
  Forward forward;
  forward.ncclId.resize(extent);
  in.getBytes(forward.ncclId.data(), extent, "the real NCCL's id");
  // Its length runs to its last non-zero byte, so that each id has one encoding.
  if (forward.ncclId.back() == 0) in.fail("the real NCCL's id ends in a zero byte inside its length");
  forward.reason = getLineText(in);
  return forward;
}

Failure forwardIdFailure(const std::string& root, const std::string& reason, const std::exception& why) {
  const auto* own = dynamic_cast<const Error*>(&why);
  return {own != nullptr ? own->code() : ErrorCode::Internal,
          fmt::format("the bootstrap root at {} sends the world to the real NCCL ({}) but has no id of the real "
                      "NCCL for it: {}",
                      root, reason, why.what())};
}

ForwardedWorld::ForwardedWorld(const std::string& root, Forward forward)
    : Error(ErrorCode::Unsupported,
            fmt::format("the bootstrap root at {} sent every rank to the real NCCL ({}): this unique id, made by "
                        "NCCL's API, lets its root hand a world across machines to the real NCCL",
                        root, forward.reason)),
      forward_(std::move(forward)) {}

}  // namespace peerlink::bootstrap
