// The links between every two GPUs as placement judges them: one entry per unordered pair, the worse of its
// two directions, with the doctor's verdicts folded in; groups scored and described from it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "peerlink/doctor.hpp"
#include "peerlink/placement.hpp"
#include "peerlink/topology.hpp"

namespace peerlink::place {

/// One unordered pair of GPUs.
struct PairLink {
  int tier = 0;           ///< PathClass value (LOC 0 .. SYS 7); kNoP2pTier when a direction has no P2P
  double gbps = 0;        ///< the lesser direction's expected bandwidth
  bool broken = false;    ///< BROKEN in either direction (never grouped)
  bool degraded = false;  ///< DEGRADED in either direction, BROKEN in neither
};

/// Worse than any path class: no P2P, the pair's traffic goes through host memory.
constexpr int kNoP2pTier = static_cast<int>(PathClass::SYS) + 1;

class LinkTable {
 public:
  /// From the topology's pairs and, when given, the doctor's verdicts of directed pairs (verdicts naming GPUs
  /// outside the topology are ignored).
  LinkTable(const Topology& topology, const std::optional<std::vector<PairVerdict>>& verdicts);

  int gpuCount() const { return count_; }
  const PairLink& link(int a, int b) const;

  /// The score of a group of GPUs (distinct indices); nullopt when it holds a BROKEN pair.
  std::optional<GroupScore> score(const std::vector<int>& members) const;

  /// One line on the links inside a group: the mix of links and the weakest pair, with where it runs
  /// (switch, host bridge, sockets) and its bandwidth.
  std::string describe(const std::vector<int>& members) const;

  /// Whether every pair among `gpus` is linked alike (same tier and bandwidth); then `label` is that link.
  bool allAlike(const std::vector<int>& gpus, std::string& label) const;

 private:
  std::string pairLabel(int a, int b) const;
  std::string whereItRuns(int a, int b) const;

  const Topology& topology_;
  int count_ = 0;
  std::vector<PairLink> links_;  // count_ x count_, symmetric
};

/// One line saying where partition `other` (scores weakest first) is worse than `best`, for the first group
/// at which they differ; empty when they are equal.
std::string describeDifference(const std::vector<GroupScore>& best, const std::vector<GroupScore>& other);

/// "NVL", "PIX", ..., "no P2P" for a tier.
std::string tierName(int tier);

}  // namespace peerlink::place
