// Each pair's way (pair_transport.hpp): the route's choice over the topology, with the doctor's BROKEN pairs and
// the GPUs outside the communicator denied P2P.
#include "coll/pair_transport.hpp"

#include <algorithm>
#include <cstddef>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

int gpuCount(const Topology& topology) {
  return static_cast<int>(topology.gpus.size());
}

void validateDevices(const Topology& topology, const std::vector<int>& devices) {
  if (devices.empty()) throw Error(ErrorCode::InvalidUsage, "pair transport: a communicator needs at least one GPU");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const int gpu = devices[i];
    if (gpu < 0 || gpu >= gpuCount(topology)) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("pair transport: rank {} is on GPU {}, but the topology has GPUs "
                              "0..{}",
                              i, gpu, gpuCount(topology) - 1));
    }
    if (std::count(devices.begin(), devices.end(), gpu) > 1) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("pair transport: GPU {} is given for more than one rank (one GPU per rank)", gpu));
    }
  }
}

std::string findingCodes(const PairVerdict& verdict) {
  return verdict.reasons.empty() ? std::string() : fmt::format(": {}", fmt::join(verdict.reasons, ", "));
}

const PairVerdict* verdictOf(const PeerVerdicts* verdicts, int src, int dst) {
  if (verdicts == nullptr) return nullptr;
  for (const PairVerdict& verdict : verdicts->pairs) {
    if (verdict.src == src && verdict.dst == dst) return &verdict;
  }
  return nullptr;
}

std::string verdictLine(VerifyPolicy policy, const PeerVerdicts* verdicts) {
  if (policy == VerifyPolicy::Off) return "PEERLINK_VERIFY=off: the doctor's verdicts are not used";
  if (verdicts == nullptr || verdicts->pairs.empty()) {
    const std::string why = verdicts == nullptr || verdicts->absence.empty() ? "none given" : verdicts->absence;
    return fmt::format(
        "no doctor verdicts: {}; peer access is trusted as the driver reports it "
        "(PEERLINK_VERIFY=quick probes it)",
        why);
  }
  const std::size_t broken =
      static_cast<std::size_t>(std::count_if(verdicts->pairs.begin(), verdicts->pairs.end(),
                                             [](const PairVerdict& v) { return v.verdict == Verdict::Broken; }));
  return fmt::format("doctor verdicts for {} pair{} ({}), {} BROKEN", verdicts->pairs.size(),
                     verdicts->pairs.size() == 1 ? "" : "s",
                     verdicts->source.empty() ? "source not given" : verdicts->source, broken);
}

// The topology the routes are chosen on: BROKEN pairs and pairs with a GPU outside the communicator denied P2P
// (a relay GPU must be a rank: its kernel and buffers are the communicator's).
Topology deniedTopology(const Topology& topology, const std::vector<int>& devices, const PeerVerdicts* verdicts) {
  Topology denied = topology;
  std::vector<bool> member(topology.gpus.size(), false);
  for (int gpu : devices) member[static_cast<std::size_t>(gpu)] = true;
  for (GpuPair& pair : denied.pairs) {
    for (int gpu : {pair.src, pair.dst}) {
      if (gpu >= 0 && gpu < gpuCount(topology) && !member[static_cast<std::size_t>(gpu)]) {
        pair.p2pDenied = fmt::format("GPU {} is not in this communicator", gpu);
      }
    }
  }
  if (verdicts == nullptr) return denied;
  for (const PairVerdict& verdict : verdicts->pairs) {
    if (verdict.verdict != Verdict::Broken) continue;
    if (verdict.src < 0 || verdict.dst < 0 || verdict.src >= gpuCount(topology) || verdict.dst >= gpuCount(topology) ||
        verdict.src == verdict.dst) {
      continue;  // a verdict of another machine's numbering: nothing to deny here
    }
    GpuPair& pair = denied.pair(verdict.src, verdict.dst);
    if (!pair.p2pDenied.empty()) continue;
    pair.p2pDenied = fmt::format("the doctor found GPU {} -> GPU {} BROKEN{} ({})", verdict.src, verdict.dst,
                                 findingCodes(verdict), verdicts->source.empty() ? "verdict given" : verdicts->source);
  }
  return denied;
}

PairWay wayOf(RouteMode mode) {
  switch (mode) {
    case RouteMode::Direct:
    case RouteMode::Ipc:
    case RouteMode::Cumem: return PairWay::Direct;
    case RouteMode::Relay: return PairWay::Relay;
    case RouteMode::Staged: return PairWay::HostStaged;
  }
  return PairWay::HostStaged;
}

// What a verdict adds to a pair that still carries peer traffic (directly or as a relay's end).
std::string verdictNote(const PairVerdict* verdict, const PairChoice& choice) {
  if (verdict == nullptr || choice.way == PairWay::HostStaged) return {};
  if (verdict->verdict == Verdict::Degraded) {
    return fmt::format("; the doctor found it DEGRADED{} (works, slower than its link should)", findingCodes(*verdict));
  }
  if (verdict->verdict == Verdict::Ok) return "; the doctor found it OK";
  return {};
}

}  // namespace

VerifyPolicy verifyPolicy(const Params& params) {
  const std::string& value = params.getString("PEERLINK_VERIFY");
  if (value == "off") return VerifyPolicy::Off;
  if (value == "quick") return VerifyPolicy::Quick;
  return VerifyPolicy::Cached;
}

PeerVerdicts peerVerdictsFrom(const CachedVerdicts& cached) {
  PeerVerdicts verdicts;
  verdicts.pairs = cached.pairs;
  verdicts.source = cached.directory.empty() ? "cached by peerlink doctor"
                                             : fmt::format("cached by peerlink doctor in {}", cached.directory);
  verdicts.absence = cached.absence;
  return verdicts;
}

const PairChoice& PairTransport::at(int srcRank, int dstRank) const {
  const int n = static_cast<int>(devices.size());
  if (srcRank < 0 || dstRank < 0 || srcRank >= n || dstRank >= n || srcRank == dstRank) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("pair transport: no pair rank {} -> rank {} among {} ranks", srcRank, dstRank, n));
  }
  // (src, dst) order without the diagonal: n - 1 entries per source.
  const int index = srcRank * (n - 1) + (dstRank < srcRank ? dstRank : dstRank - 1);
  return pairs[static_cast<std::size_t>(index)];
}

PairTransport choosePairTransport(const Topology& topology, const std::vector<int>& devices, const Params& params,
                                  ProcessBoundary boundary, const PeerVerdicts* verdicts) {
  validateDevices(topology, devices);
  const VerifyPolicy policy = verifyPolicy(params);
  const PeerVerdicts* used = policy == VerifyPolicy::Off ? nullptr : verdicts;
  const Topology denied = deniedTopology(topology, devices, used);
  PairTransport transport;
  transport.devices = devices;
  transport.boundary = boundary;
  transport.verdicts = verdictLine(policy, verdicts);
  const int n = static_cast<int>(devices.size());
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      PairChoice choice;
      choice.srcRank = a;
      choice.dstRank = b;
      choice.srcGpu = devices[static_cast<std::size_t>(a)];
      choice.dstGpu = devices[static_cast<std::size_t>(b)];
      const Route route = selectRoute(denied, params, {choice.srcGpu, choice.dstGpu, 0, boundary});
      choice.mode = route.mode;
      choice.way = wayOf(route.mode);
      choice.link = linkLabel(topology.pair(choice.srcGpu, choice.dstGpu));
      if (choice.way == PairWay::Relay) {
        choice.relayGpu = route.relayGpu;
        const auto it = std::find(devices.begin(), devices.end(), route.relayGpu);
        if (it == devices.end()) {
          throw Error(ErrorCode::Internal, fmt::format("pair transport: GPU {} -> GPU {} relays through GPU {}, which "
                                                       "is not in the communicator",
                                                       choice.srcGpu, choice.dstGpu, route.relayGpu));
        }
        choice.relayRank = static_cast<int>(it - devices.begin());
      }
      const PairVerdict* verdict = verdictOf(used, choice.srcGpu, choice.dstGpu);
      if (verdict != nullptr) choice.verdict = verdict->verdict;
      choice.why = route.modeReason + verdictNote(verdict, choice);
      transport.pairs.push_back(std::move(choice));
    }
  }
  return transport;
}

RankLinks rankLinksOf(const PairTransport& transport) {
  RankLinks links = RankLinks::uniform(static_cast<int>(transport.devices.size()), PairWay::HostStaged);
  for (const PairChoice& choice : transport.pairs) {
    links.set(choice.srcRank, choice.dstRank, choice.way, choice.way == PairWay::Relay ? choice.relayRank : -1);
  }
  validateRankLinks(links);
  return links;
}

std::string describePairChoice(const PairChoice& choice) {
  return fmt::format("GPU {} -> GPU {}: {}: {}", choice.srcGpu, choice.dstGpu, pairWayName(choice.way), choice.why);
}

std::string formatPairTransport(const PairTransport& transport) {
  const RankLinks links = rankLinksOf(transport);
  std::string text = fmt::format(
      "# Each pair's way ({}): {}\n",
      transport.boundary == ProcessBoundary::SameProcess ? "one process" : "one process per GPU", transport.verdicts);
  if (transport.devices.size() >= 2) {
    text += fmt::format("# Ring of the staged plans, by rank: {}\n", describeRing(links, chooseRing(links)));
  }
  text += fmt::format("# {:<9} {:<9} {:<5} {:<11} {}\n", "ranks", "GPUs", "link", "way", "why");
  for (const PairChoice& choice : transport.pairs) {
    std::string way = pairWayName(choice.way);
    if (choice.way == PairWay::Relay) way += fmt::format(" {}", choice.relayGpu);
    text += fmt::format("  {:<9} {:<9} {:<5} {:<11} {}\n", fmt::format("{} -> {}", choice.srcRank, choice.dstRank),
                        fmt::format("{} -> {}", choice.srcGpu, choice.dstGpu), choice.link, way, choice.why);
  }
  return text;
}

}  // namespace peerlink::coll
