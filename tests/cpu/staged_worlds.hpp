// Worlds of mixed pairs for the staged plans' CPU tests (coll/plan_staged.hpp): no P2P at all, one pair (or one
// direction) forced to host staging, two islands joined only through host memory, relayed pairs and random mixes.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "coll/rank_links.hpp"

namespace peerlink::coll {

struct StagedWorld {
  std::string name;
  RankLinks links;
};

inline RankLinks oneDirectionStaged(int n, int from, int to) {
  RankLinks links = RankLinks::uniform(n, PairWay::Direct);
  links.set(from, to, PairWay::HostStaged);
  return links;
}

// Ranks below n/2 and the others: peer access within each half, host staging between them (a dual-socket
// PCIe server), with the halves interleaved so that rank order is not the best ring.
inline RankLinks interleavedIslands(int n) {
  RankLinks links = RankLinks::uniform(n, PairWay::Direct);
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s % 2 != d % 2) links.set(s, d, PairWay::HostStaged);
    }
  }
  return links;
}

// Every pair direct but rank 0 <-> rank n-1, relayed through rank 1.
inline RankLinks relayedEnds(int n) {
  RankLinks links = RankLinks::uniform(n, PairWay::Direct);
  links.set(0, n - 1, PairWay::Relay, 1);
  links.set(n - 1, 0, PairWay::Relay, 1);
  return links;
}

// Each ordered pair direct or host-staged at random, then relayed where a third rank reaches both directly.
inline RankLinks randomMix(int n, std::uint32_t seed) {
  std::mt19937 random(seed);
  RankLinks links = RankLinks::uniform(n, PairWay::Direct);
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s != d && random() % 3 == 0) links.set(s, d, PairWay::HostStaged);
    }
  }
  const RankLinks plain = links;
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s == d || plain.way(s, d) == PairWay::Direct || random() % 2 == 0) continue;
      for (int k = 0; k < n; ++k) {
        if (k != s && k != d && plain.way(s, k) == PairWay::Direct && plain.way(k, d) == PairWay::Direct) {
          links.set(s, d, PairWay::Relay, k);
          break;
        }
      }
    }
  }
  return links;
}

inline std::vector<StagedWorld> stagedWorlds(int n) {
  std::vector<StagedWorld> all = {
      {"no P2P", RankLinks::uniform(n, PairWay::HostStaged)},
      {"all direct", RankLinks::uniform(n, PairWay::Direct)},
      {"0 -> 1 host-staged", oneDirectionStaged(n, 0, 1)},
      {"islands", interleavedIslands(n)},
  };
  RankLinks pair = oneDirectionStaged(n, 0, 1);
  pair.set(1, 0, PairWay::HostStaged);
  all.push_back({"0 <-> 1 host-staged", pair});
  if (n >= 3) all.push_back({"0 <-> n-1 relayed", relayedEnds(n)});
  for (std::uint32_t seed = 0; seed < 2; ++seed) {
    all.push_back({"random " + std::to_string(seed), randomMix(n, seed * 97 + static_cast<std::uint32_t>(n))});
  }
  return all;
}

}  // namespace peerlink::coll
