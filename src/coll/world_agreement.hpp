// Whether every process of a world got through a step they all take at the same point (opening each other's
// buffers, say): each says so in one byte a local rank, and every process learns the same answer, so none goes on
// where another could not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "coll/world_exchange.hpp"

namespace peerlink::coll {

/// The ranks whose processes said `failed`: each of this process's `localRanks` ranks gives one byte, gathered over
/// the world's `nranks` ranks by `allGather` (WorldExchange::allGather's meaning). Every process calls it, failed or
/// not, and gets the same ranks (none where every process got through).
inline std::vector<int> ranksThatFailed(const WorldAllGather& allGather, std::size_t localRanks, int nranks,
                                        bool failed) {
  const std::vector<std::vector<std::uint8_t>> mine(localRanks, {static_cast<std::uint8_t>(failed ? 1 : 0)});
  const std::vector<std::uint8_t> all = allGather(mine, 1);
  std::vector<int> ranks;
  for (int r = 0; r < nranks; ++r) {
    if (all[static_cast<std::size_t>(r)] != 0) ranks.push_back(r);
  }
  return ranks;
}

}  // namespace peerlink::coll
