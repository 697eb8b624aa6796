// How data may travel between the ranks of a world, as the plans with host-staged hops (plan_staged.hpp) need
// it: for every ordered pair of ranks, peer access, a relay through a third rank, or a stage in pinned host
// memory. Plain data: pair_transport.hpp derives it from the topology, the settings and the doctor's verdicts;
// tests build it by hand. checkPlanLinks proves a plan moves data only the ways the links allow.
#pragma once

#include <string>
#include <vector>

#include "coll/plan.hpp"

namespace peerlink::coll {

/// The way data goes from one rank's GPU to another's, best first.
enum class PairWay {
  Direct,      ///< peer access: one GPU reads or writes the other's memory (in one process or mapped by IPC/cuMem)
  Relay,       ///< through a third rank's GPU that has peer access with both
  HostStaged,  ///< device to pinned host memory on the sender, host to device on the receiver
};

/// "direct", "relay", "host-staged".
const char* pairWayName(PairWay way) noexcept;

/// The way of every ordered pair of `nranks` ranks.
struct RankLinks {
  int nranks = 0;
  std::vector<PairWay> ways;  ///< [src * nranks + dst]; the diagonal is Direct (a rank's own memory)
  std::vector<int> relays;    ///< [src * nranks + dst]: the relay rank where the way is Relay, else -1

  PairWay way(int src, int dst) const { return ways[index(src, dst)]; }
  int relay(int src, int dst) const { return relays[index(src, dst)]; }
  void set(int src, int dst, PairWay way, int relayRank = -1) {
    ways[index(src, dst)] = way;
    relays[index(src, dst)] = relayRank;
  }
  /// Every pair `way` (Relay is not a uniform way: Error(InvalidUsage)).
  static RankLinks uniform(int nranks, PairWay way);

 private:
  std::size_t index(int src, int dst) const {
    return static_cast<std::size_t>(src) * static_cast<std::size_t>(nranks) + static_cast<std::size_t>(dst);
  }
};

/// Checks `links` hold together: sizes, a relay rank for every Relay pair that is neither end and has Direct
/// ways with both, none elsewhere. Throws Error(InvalidUsage) naming the first problem.
void validateRankLinks(const RankLinks& links);

/// The ring the staged plans follow: a permutation of the ranks, rank 0 first, whose hops (order[i] ->
/// order[i+1], the last back to the first) need the fewest host-staged hops, then the fewest relayed ones;
/// among equals the first in lexicographic order, so a world where rank order is as good keeps it. Exhaustive
/// over the (nranks-1)! rings up to 9 ranks, rank order beyond.
std::vector<int> chooseRing(const RankLinks& links);

/// "0 -> 1 -> 3 -> 2 -> 0 (1 host-staged hop: 2 -> 0)": the ring and what its hops need.
std::string describeRing(const RankLinks& links, const std::vector<int>& ring);

/// Proves `plan` respects `links`: every transfer whose executor touches another rank's device buffer (input,
/// output or scratch) does so over a Direct way in the direction the data flows (a read of rank q's buffer by
/// executor e needs q -> e, a write into q's buffer e -> q). Host stage buffers are reachable by every rank.
/// Throws Error(Internal) naming the plan, the step, the transfer and the pair.
void checkPlanLinks(const Plan& plan, const RankLinks& links);

}  // namespace peerlink::coll
