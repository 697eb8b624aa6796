// Rank links, the ring over them and the check that a plan respects them (rank_links.hpp).
#include "coll/rank_links.hpp"

#include <algorithm>
#include <cstddef>
#include <numeric>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// Up to 9 ranks every ring is tried ((n-1)! <= 40320); kCollMaxRanks is 8.
constexpr int kExhaustiveRingRanks = 9;

// A ring's cost: host-staged hops first, then relayed ones (each weight above the most hops of a lesser kind).
long ringCost(const RankLinks& links, const std::vector<int>& ring) {
  const long n = static_cast<long>(ring.size());
  long cost = 0;
  for (std::size_t i = 0; i < ring.size(); ++i) {
    switch (links.way(ring[i], ring[(i + 1) % ring.size()])) {
      case PairWay::Direct: break;
      case PairWay::Relay: cost += 1; break;
      case PairWay::HostStaged: cost += n + 1; break;
    }
  }
  return cost;
}

bool isDevice(BufferKind buffer) {
  return buffer != BufferKind::HostStage;
}

}  // namespace

const char* pairWayName(PairWay way) noexcept {
  switch (way) {
    case PairWay::Direct: return "direct";
    case PairWay::Relay: return "relay";
    case PairWay::HostStaged: return "host-staged";
  }
  return "?";
}

RankLinks RankLinks::uniform(int nranks, PairWay way) {
  if (way == PairWay::Relay) throw Error(ErrorCode::InvalidUsage, "RankLinks::uniform: relay needs a relay rank");
  RankLinks links;
  links.nranks = nranks;
  const std::size_t n = static_cast<std::size_t>(std::max(nranks, 0));
  links.ways.assign(n * n, way);
  links.relays.assign(n * n, -1);
  for (int r = 0; r < nranks; ++r) links.set(r, r, PairWay::Direct);
  return links;
}

void validateRankLinks(const RankLinks& links) {
  const int n = links.nranks;
  const std::size_t cells = static_cast<std::size_t>(std::max(n, 0)) * static_cast<std::size_t>(std::max(n, 0));
  if (n < 1 || links.ways.size() != cells || links.relays.size() != cells) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("rank links of {} ranks hold {} ways and {} relays", n,
                                                     links.ways.size(), links.relays.size()));
  }
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      const int k = links.relay(s, d);
      const auto bad = [&](const std::string& why) {
        throw Error(ErrorCode::InvalidUsage, fmt::format("rank links {} -> {}: {}", s, d, why));
      };
      if (s == d && links.way(s, d) != PairWay::Direct) bad("a rank reaches its own memory directly");
      if (links.way(s, d) != PairWay::Relay) {
        if (k != -1) bad(fmt::format("relay rank {} on a {} pair", k, pairWayName(links.way(s, d))));
        continue;
      }
      if (k < 0 || k >= n || k == s || k == d) bad(fmt::format("relay rank {} is not a third rank", k));
      if (links.way(s, k) != PairWay::Direct || links.way(k, d) != PairWay::Direct) {
        bad(fmt::format("relay rank {} lacks peer access with both ends ({} -> {} {}, {} -> {} {})", k, s, k,
                        pairWayName(links.way(s, k)), k, d, pairWayName(links.way(k, d))));
      }
    }
  }
}

std::vector<int> chooseRing(const RankLinks& links) {
  validateRankLinks(links);
  std::vector<int> ring(static_cast<std::size_t>(links.nranks));
  std::iota(ring.begin(), ring.end(), 0);
  if (links.nranks > kExhaustiveRingRanks || links.nranks < 3) return ring;
  std::vector<int> best = ring;
  long bestCost = ringCost(links, ring);
  // Rank 0 stays first: rotations of a ring are the same ring.
  while (bestCost > 0 && std::next_permutation(ring.begin() + 1, ring.end())) {
    const long cost = ringCost(links, ring);
    if (cost < bestCost) {
      best = ring;
      bestCost = cost;
    }
  }
  return best;
}

std::string describeRing(const RankLinks& links, const std::vector<int>& ring) {
  std::string text;
  std::vector<std::string> staged;
  std::vector<std::string> relayed;
  for (std::size_t i = 0; i < ring.size(); ++i) {
    const int from = ring[i];
    const int to = ring[(i + 1) % ring.size()];
    text += fmt::format("{} -> ", from);
    const PairWay way = links.way(from, to);
    if (way == PairWay::HostStaged) staged.push_back(fmt::format("{} -> {}", from, to));
    if (way == PairWay::Relay) relayed.push_back(fmt::format("{} -> {} via {}", from, to, links.relay(from, to)));
  }
  text += ring.empty() ? "" : std::to_string(ring.front());
  if (staged.empty() && relayed.empty()) return text + " (every hop direct)";
  std::vector<std::string> parts;
  if (!staged.empty()) {
    parts.push_back(
        fmt::format("{} host-staged hop{}: {}", staged.size(), staged.size() == 1 ? "" : "s", fmt::join(staged, ", ")));
  }
  if (!relayed.empty()) {
    parts.push_back(
        fmt::format("{} relayed hop{}: {}", relayed.size(), relayed.size() == 1 ? "" : "s", fmt::join(relayed, ", ")));
  }
  return fmt::format("{} ({})", text, fmt::join(parts, "; "));
}

void checkPlanLinks(const Plan& plan, const RankLinks& links) {
  validateRankLinks(links);
  if (links.nranks != plan.nranks) {
    throw Error(ErrorCode::Internal,
                fmt::format("plan {}: rank links of {} ranks for {} ranks", planName(plan), links.nranks, plan.nranks));
  }
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    for (std::size_t t = 0; t < plan.steps[s].transfers.size(); ++t) {
      const Transfer& transfer = plan.steps[s].transfers[t];
      const int e = transfer.executor;
      const auto need = [&](int from, int to, const char* what) {
        if (from == to || links.way(from, to) == PairWay::Direct) return;
        throw Error(ErrorCode::Internal,
                    fmt::format("plan {}: step {}: transfer {} ({}) {} but rank {} -> rank {} is {}", planName(plan), s,
                                t, describeTransfer(transfer), what, from, to, pairWayName(links.way(from, to))));
      };
      for (const BufferRef& src : transfer.srcs) {
        if (isDevice(src.buffer)) need(src.rank, e, "reads a peer's device buffer");
      }
      if (isDevice(transfer.dst.buffer)) need(e, transfer.dst.rank, "writes a peer's device buffer");
    }
  }
}

}  // namespace peerlink::coll
