// Ranks' ways from their GPUs' (rank_transport.hpp).
#include "coll/rank_transport.hpp"

#include <algorithm>
#include <cstddef>

#include <fmt/format.h>

#include "coll/plan_staged.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

int parseRank(const std::string& text, const std::string& entry, int nranks) {
  const bool digits = !text.empty() && text.size() <= 4 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int rank = digits ? std::stoi(text) : -1;
  if (rank < 0 || rank >= nranks) {
    throw Error(
        ErrorCode::InvalidUsage,
        fmt::format("PEERLINK_COLL_HOST_STAGED: '{}' is not a pair of ranks 0..{} such as 0-1", entry, nranks - 1));
  }
  return rank;
}

bool isForced(const std::vector<std::pair<int, int>>& forced, int a, int b) {
  return std::any_of(forced.begin(), forced.end(), [&](const std::pair<int, int>& pair) {
    return (pair.first == a && pair.second == b) || (pair.first == b && pair.second == a);
  });
}

const GpuPair* findPair(const Topology& topology, int src, int dst) {
  for (const GpuPair& pair : topology.pairs) {
    if (pair.src == src && pair.dst == dst) return &pair;
  }
  return nullptr;
}

// Across processes a GPU hidden from a rank's process (CUDA_VISIBLE_DEVICES) leaves pairs out of the world's
// topology. They are trusted as direct, as the kernels always trusted them: a missing direction is the other's
// where that one is known, else a pair with peer access on the nearest path.
Topology withEveryPair(const Topology& topology, const std::vector<int>& gpus) {
  Topology complete = topology;
  for (const int a : gpus) {
    for (const int b : gpus) {
      if (a == b || findPair(topology, a, b) != nullptr) continue;
      GpuPair pair;
      if (const GpuPair* reverse = findPair(topology, b, a)) pair = *reverse;
      if (findPair(topology, b, a) == nullptr) {
        pair.canAccessPeer = true;
        pair.path = PathClass::PIX;
      }
      pair.src = a;
      pair.dst = b;
      complete.pairs.push_back(pair);
    }
  }
  std::sort(complete.pairs.begin(), complete.pairs.end(),
            [](const GpuPair& x, const GpuPair& y) { return x.src != y.src ? x.src < y.src : x.dst < y.dst; });
  return complete;
}

}  // namespace

std::vector<std::pair<int, int>> forcedHostStagedPairs(const std::string& value, int nranks) {
  std::vector<std::pair<int, int>> pairs;
  if (value.empty()) return pairs;
  if (value == "all") {
    for (int a = 0; a < nranks; ++a) {
      for (int b = a + 1; b < nranks; ++b) pairs.emplace_back(a, b);
    }
    return pairs;
  }
  std::size_t begin = 0;
  while (begin <= value.size()) {
    const std::size_t end = std::min(value.find(',', begin), value.size());
    const std::string entry = value.substr(begin, end - begin);
    const std::size_t dash = entry.find('-');
    if (dash == std::string::npos) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("PEERLINK_COLL_HOST_STAGED: '{}' is not a pair of ranks such as 0-1 (or 'all')", entry));
    }
    const int a = parseRank(entry.substr(0, dash), entry, nranks);
    const int b = parseRank(entry.substr(dash + 1), entry, nranks);
    if (a == b) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("PEERLINK_COLL_HOST_STAGED: '{}' names one rank twice; a pair is two ranks", entry));
    }
    pairs.emplace_back(a, b);
    begin = end + 1;
  }
  return pairs;
}

RankTransport chooseRankTransport(const Topology& topology, const std::vector<int>& rankDevices, const Params& params,
                                  const PeerVerdicts* verdicts, const std::vector<std::int64_t>& rankProcess) {
  const int n = static_cast<int>(rankDevices.size());
  const auto apart = [&](int a, int b) {
    return !rankProcess.empty() && rankProcess[static_cast<std::size_t>(a)] != rankProcess[static_cast<std::size_t>(b)];
  };
  bool spansProcesses = false;
  for (int r = 1; r < n; ++r) spansProcesses = spansProcesses || apart(0, r);
  std::vector<int> gpus;  // distinct, in the order of their first rank
  for (const int gpu : rankDevices) {
    if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) gpus.push_back(gpu);
  }
  const auto indexOf = [&](int gpu) {
    return static_cast<int>(std::find(gpus.begin(), gpus.end(), gpu) - gpus.begin());
  };
  const auto firstRankOn = [&](int gpu) {
    return static_cast<int>(std::find(rankDevices.begin(), rankDevices.end(), gpu) - rankDevices.begin());
  };
  RankTransport result;
  PairTransport gpuWays;
  if (gpus.size() >= 2) {
    gpuWays = spansProcesses ? choosePairTransport(withEveryPair(topology, gpus), gpus, params,
                                                   ProcessBoundary::CrossProcess, verdicts)
                             : choosePairTransport(topology, gpus, params, ProcessBoundary::SameProcess, verdicts);
    result.verdicts = gpuWays.verdicts;
  } else {
    result.verdicts = "one GPU: every rank shares its memory";
  }
  const std::vector<std::pair<int, int>> forced =
      forcedHostStagedPairs(params.getString("PEERLINK_COLL_HOST_STAGED"), n);
  result.links = RankLinks::uniform(n, PairWay::Direct);
  std::vector<std::string> why(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  const auto at = [&](int a, int b) -> std::string& {
    return why[static_cast<std::size_t>(a) * static_cast<std::size_t>(n) + static_cast<std::size_t>(b)];
  };
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const int ga = rankDevices[static_cast<std::size_t>(a)];
      const int gb = rankDevices[static_cast<std::size_t>(b)];
      if (isForced(forced, a, b)) {
        result.links.set(a, b, PairWay::HostStaged);
        at(a, b) = "forced by PEERLINK_COLL_HOST_STAGED";
      } else if (ga != gb) {
        const PairChoice& choice = gpuWays.at(indexOf(ga), indexOf(gb));
        result.links.set(a, b, choice.way, choice.way == PairWay::Relay ? firstRankOn(choice.relayGpu) : -1);
        at(a, b) = choice.why;
      }
    }
  }
  // A relay whose hops were forced through host memory cannot relay: the pair goes through host memory too.
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b || result.links.way(a, b) != PairWay::Relay) continue;
      const int k = result.links.relay(a, b);
      if (result.links.way(a, k) == PairWay::Direct && result.links.way(k, b) == PairWay::Direct) continue;
      result.links.set(a, b, PairWay::HostStaged);
      at(a, b) = fmt::format("its relay, rank {}, is reached through host memory", k);
    }
  }
  if (spansProcesses && needsStagedPlans(result.links)) {
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        if (a == b || !apart(a, b) || result.links.way(a, b) == PairWay::HostStaged) continue;
        result.links.set(a, b, PairWay::HostStaged);
        at(a, b) = "in another process: ranks of different processes meet only in the host stages";
      }
    }
  }
  validateRankLinks(result.links);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b || result.links.way(a, b) == PairWay::Direct) continue;
      std::string way = pairWayName(result.links.way(a, b));
      if (result.links.way(a, b) == PairWay::Relay) way += fmt::format(" through rank {}", result.links.relay(a, b));
      result.reasons.push_back(fmt::format("rank {} (GPU {}) -> rank {} (GPU {}): {}: {}", a,
                                           rankDevices[static_cast<std::size_t>(a)], b,
                                           rankDevices[static_cast<std::size_t>(b)], way, at(a, b)));
    }
  }
  return result;
}

}  // namespace peerlink::coll
