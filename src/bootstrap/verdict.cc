#include "bootstrap/verdict.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bootstrap/hello.hpp"
#include "bootstrap/identity.hpp"
#include "bootstrap/wire.hpp"

namespace peerlink::bootstrap {
namespace {

// Hosts, and ranks that cannot follow a forward, named in a reason; a world of many more says how many it left out.
constexpr std::size_t kHostsNamed = 4;
constexpr std::size_t kUnableNamed = 4;

struct HostRanks {
  std::uint64_t hostId = 0;
  std::string name;
  std::vector<int> ranks;
};

// "rank 3 (host b, pid 7) has no real NCCL to forward to: why", or for several "2 of 8 ranks have no real NCCL to
// forward to: rank 3 (host b, pid 7): why; rank 5 (...): why".
std::string describeUnable(const std::vector<const Hello*>& unable, std::size_t nranks) {
  if (unable.size() == 1) {
    return fmt::format("{} has no real NCCL to forward to: {}", describePeer(unable.front()->identity),
                       whyUnableToForward(unable.front()->forwarding));
  }
  std::vector<std::string> named;
  for (std::size_t i = 0; i < unable.size() && i < kUnableNamed; ++i) {
    named.push_back(
        fmt::format("{}: {}", describePeer(unable[i]->identity), whyUnableToForward(unable[i]->forwarding)));
  }
  std::string text =
      fmt::format("{} of {} ranks have no real NCCL to forward to: {}", unable.size(), nranks, fmt::join(named, "; "));
  if (unable.size() > kUnableNamed) text += fmt::format("; and {} more", unable.size() - kUnableNamed);
  return text;
}

}  // namespace

const char* whyUnableToForward(ForwardAbility forwarding) {
  switch (forwarding) {
    case ForwardAbility::NotNcclApi: return "it joined through peerlink's own API, not NCCL's";
    case ForwardAbility::FallbackNone: return "PEERLINK_NCCL_FALLBACK=NONE";
    case ForwardAbility::NoRealNccl:
      return "no real libnccl.so.2 could be loaded there (set PEERLINK_NCCL_LIBRARY; with PEERLINK_DEBUG=INFO its "
             "INIT log lists what was searched)";
    case ForwardAbility::Able: break;
  }
  return "(it can)";
}

ServerVerdict chooseWorldServer(const std::vector<Hello>& world) {
  std::vector<const Hello*> ordered;
  for (const Hello& hello : world) ordered.push_back(&hello);
  std::sort(ordered.begin(), ordered.end(),
            [](const Hello* a, const Hello* b) { return a->identity.rank < b->identity.rank; });
  std::vector<HostRanks> hosts;  // in the order of their lowest rank
  std::vector<const Hello*> unable;
  for (const Hello* hello : ordered) {
    const PeerIdentity& peer = hello->identity;
    auto host = std::find_if(hosts.begin(), hosts.end(), [&](const HostRanks& h) { return h.hostId == peer.hostId; });
    if (host == hosts.end()) host = hosts.insert(hosts.end(), HostRanks{peer.hostId, peer.hostName, {}});
    host->ranks.push_back(peer.rank);
    if (hello->forwarding != ForwardAbility::Able) unable.push_back(hello);
  }
  if (hosts.size() <= 1) {
    return {WorldServer::Peerlink,
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
  if (unable.empty()) return {WorldServer::RealNccl, reason};
  return {WorldServer::Refused,
          fmt::format("{}, which only the real NCCL serves, but {}", reason, describeUnable(unable, world.size()))};
}

Failure refusedWorldFailure(const std::string& root, const ServerVerdict& verdict) {
  return {ErrorCode::InvalidUsage,
          fmt::format("the bootstrap root at {} refuses the world: {}: every rank of a world across hosts must be able "
                      "to use the real NCCL",
                      root, verdict.reason)};
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
