// The search for the best partition of n GPUs into g groups of k (the rest left unused): every partition
// when there are few enough, else a greedy grouping improved by swaps. Partitions are compared by their group
// scores, weakest group first (compareGroupScores); a group the scorer refuses (a BROKEN pair) is never formed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "peerlink/placement.hpp"

namespace peerlink::place {

using Groups = std::vector<std::vector<int>>;
/// A group's score, or nullopt when it may not be formed.
using GroupScorer = std::function<std::optional<GroupScore>(const std::vector<int>& members)>;

struct SearchResult {
  Groups best;                         ///< empty when no partition can be formed
  std::vector<GroupScore> bestScores;  ///< weakest first
  std::uint64_t equallyGood = 0;       ///< partitions as good as `best`, itself included
  std::optional<Groups> nextBest;      ///< the best partition worse than `best`
  std::vector<GroupScore> nextScores;
  std::uint64_t tried = 0;  ///< partitions scored
  bool exhaustive = true;
};

/// How many ways there are to choose g groups of k out of n GPUs (groups unordered): C(n, gk) (gk)! / (k!^g g!).
double countPartitions(int n, int k, int g);

/// -1, 0, 1 as partition `a` (scores weakest first) is better than, as good as, or worse than `b`.
int comparePartitions(const std::vector<GroupScore>& a, const std::vector<GroupScore>& b);

/// The best partition of GPUs 0..n-1 into g groups of k: every one when countPartitions(n, k, g) <= limit and
/// n <= 64, else the heuristic. Groups come out ascending, ordered by their first GPU. Requires 1 <= k, g and
/// g k <= n.
SearchResult searchPartitions(int n, int k, int g, const GroupScorer& scorer, std::uint64_t limit);

}  // namespace peerlink::place
