// searchPartitions (partition_search.hpp).
#include "place/partition_search.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

namespace peerlink::place {
namespace {

// Passes of the swap improvement at most: each pass that improves raises the partition's score, so this only
// bounds the time on very large machines.
constexpr int kMaxSwapPasses = 64;

void sortWeakestFirst(std::vector<GroupScore>& scores) {
  std::stable_sort(scores.begin(), scores.end(),
                   [](const GroupScore& a, const GroupScore& b) { return compareGroupScores(a, b) > 0; });
}

Groups normalized(Groups groups) {
  for (auto& group : groups) std::sort(group.begin(), group.end());
  std::sort(groups.begin(), groups.end());
  return groups;
}

// Keeps the best partition offered, how many were as good, and the best of those worse.
class Tracker {
 public:
  void offer(const Groups& groups, std::vector<GroupScore> scores) {
    ++result_.tried;
    sortWeakestFirst(scores);
    if (result_.best.empty()) {
      take(groups, std::move(scores));
      return;
    }
    const int versusBest = comparePartitions(scores, result_.bestScores);
    if (versusBest < 0) {
      result_.nextBest = std::move(result_.best);
      result_.nextScores = std::move(result_.bestScores);
      take(groups, std::move(scores));
    } else if (versusBest == 0) {
      ++result_.equallyGood;
    } else if (!result_.nextBest || comparePartitions(scores, result_.nextScores) < 0) {
      result_.nextBest = normalized(groups);
      result_.nextScores = std::move(scores);
    }
  }
  SearchResult& result() { return result_; }

 private:
  void take(const Groups& groups, std::vector<GroupScore> scores) {
    result_.best = normalized(groups);
    result_.bestScores = std::move(scores);
    result_.equallyGood = 1;
  }
  SearchResult result_;
};

// Every partition, each once: the lowest GPU not yet placed either starts a group with k - 1 GPUs above it or
// stays unused.
class Enumerator {
 public:
  Enumerator(int n, int k, const GroupScorer& scorer, Tracker& tracker)
      : n_(n), k_(k), scorer_(scorer), tracker_(tracker) {}

  void run(int groups, int unused) { place(0, groups, unused); }

 private:
  void place(std::uint64_t used, int groupsLeft, int unusedLeft) {
    int first = 0;
    while (first < n_ && (used >> first & 1u) != 0) ++first;
    if (first == n_) {
      tracker_.offer(current_, scores_);
      return;
    }
    if (groupsLeft > 0) {  // first, so that of equal partitions the one grouping the lowest GPUs is found first
      members_.assign(1, first);
      choose(used | (std::uint64_t{1} << first), first + 1, groupsLeft, unusedLeft);
    }
    if (unusedLeft > 0) place(used | (std::uint64_t{1} << first), groupsLeft, unusedLeft - 1);
  }

  void choose(std::uint64_t used, int from, int groupsLeft, int unusedLeft) {
    if (static_cast<int>(members_.size()) == k_) {
      const std::optional<GroupScore>& score = scoreOf(members_);
      if (!score) return;
      current_.push_back(members_);
      scores_.push_back(*score);
      const std::vector<int> saved = members_;
      place(used, groupsLeft - 1, unusedLeft);
      members_ = saved;
      current_.pop_back();
      scores_.pop_back();
      return;
    }
    for (int candidate = from; candidate < n_; ++candidate) {
      if ((used >> candidate & 1u) != 0) continue;
      members_.push_back(candidate);
      choose(used | (std::uint64_t{1} << candidate), candidate + 1, groupsLeft, unusedLeft);
      members_.pop_back();
    }
  }

  const std::optional<GroupScore>& scoreOf(const std::vector<int>& members) {
    std::uint64_t mask = 0;
    for (const int gpu : members) mask |= std::uint64_t{1} << gpu;
    auto found = memo_.find(mask);
    if (found == memo_.end()) found = memo_.emplace(mask, scorer_(members)).first;
    return found->second;
  }

  int n_;
  int k_;
  const GroupScorer& scorer_;
  Tracker& tracker_;
  std::unordered_map<std::uint64_t, std::optional<GroupScore>> memo_;
  Groups current_;
  std::vector<GroupScore> scores_;
  std::vector<int> members_;
};

// The scores of `groups`, or nullopt when one may not be formed.
std::optional<std::vector<GroupScore>> scoresOf(const Groups& groups, const GroupScorer& scorer) {
  std::vector<GroupScore> scores;
  for (const auto& group : groups) {
    std::optional<GroupScore> score = scorer(group);
    if (!score) return std::nullopt;
    scores.push_back(*score);
  }
  sortWeakestFirst(scores);
  return scores;
}

// Grows each group from the seed that gives the best group, one member at a time (the member that keeps the
// group best); empty when some group cannot be formed.
Groups greedy(int n, int k, int g, const GroupScorer& scorer) {
  std::vector<int> left(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) left[static_cast<std::size_t>(i)] = i;
  Groups groups;
  for (int made = 0; made < g; ++made) {
    std::optional<std::vector<int>> bestGroup;
    std::optional<GroupScore> bestScore;
    for (const int seed : left) {
      std::vector<int> group = {seed};
      std::optional<GroupScore> score = scorer(group);
      while (score && static_cast<int>(group.size()) < k) {
        std::optional<int> pick;
        std::optional<GroupScore> pickScore;
        for (const int candidate : left) {
          if (std::find(group.begin(), group.end(), candidate) != group.end()) continue;
          group.push_back(candidate);
          const std::optional<GroupScore> grown = scorer(group);
          group.pop_back();
          if (grown && (!pickScore || compareGroupScores(*grown, *pickScore) < 0)) {
            pick = candidate;
            pickScore = grown;
          }
        }
        if (pick) group.push_back(*pick);
        score = pickScore;  // nullopt when no GPU left can join: this seed fails
      }
      if (score && (!bestScore || compareGroupScores(*score, *bestScore) < 0)) {
        bestGroup = group;
        bestScore = score;
      }
    }
    if (!bestGroup) return {};
    for (const int gpu : *bestGroup) left.erase(std::find(left.begin(), left.end(), gpu));
    groups.push_back(*bestGroup);
  }
  return groups;
}

// Swaps two GPUs of different groups, or a grouped one with an unused one, while that makes the partition
// better; every partition scored on the way is offered.
void improveBySwaps(Groups groups, int n, const GroupScorer& scorer, Tracker& tracker, std::set<Groups>& seen) {
  std::vector<int> unused;
  for (int gpu = 0; gpu < n; ++gpu) {
    bool placed = false;
    for (const auto& group : groups) placed = placed || std::find(group.begin(), group.end(), gpu) != group.end();
    if (!placed) unused.push_back(gpu);
  }
  std::optional<std::vector<GroupScore>> current = scoresOf(groups, scorer);
  if (!current) return;
  if (seen.insert(normalized(groups)).second) tracker.offer(groups, *current);
  groups.push_back(unused);  // the last entry holds the unused GPUs, which are never scored
  const std::size_t real = groups.size() - 1;
  for (int pass = 0; pass < kMaxSwapPasses; ++pass) {
    bool improved = false;
    for (std::size_t x = 0; x < real; ++x) {
      for (std::size_t y = x + 1; y < groups.size(); ++y) {
        for (std::size_t i = 0; i < groups[x].size(); ++i) {
          for (std::size_t j = 0; j < groups[y].size(); ++j) {
            std::swap(groups[x][i], groups[y][j]);
            const Groups candidate(groups.begin(), groups.begin() + static_cast<std::ptrdiff_t>(real));
            const std::optional<std::vector<GroupScore>> scores = scoresOf(candidate, scorer);
            if (scores && seen.insert(normalized(candidate)).second) tracker.offer(candidate, *scores);
            if (scores && comparePartitions(*scores, *current) < 0) {
              current = scores;
              improved = true;
            } else {
              std::swap(groups[x][i], groups[y][j]);
            }
          }
        }
      }
    }
    if (!improved) break;
  }
}

}  // namespace

double countPartitions(int n, int k, int g) {
  const double log = std::lgamma(n + 1.0) - std::lgamma(n - static_cast<double>(g) * k + 1.0) -
                     g * std::lgamma(k + 1.0) - std::lgamma(g + 1.0);
  return std::round(std::exp(log));
}

int comparePartitions(const std::vector<GroupScore>& a, const std::vector<GroupScore>& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const int order = compareGroupScores(a[i], b[i]);
    if (order != 0) return order;
  }
  return 0;
}

SearchResult searchPartitions(int n, int k, int g, const GroupScorer& scorer, std::uint64_t limit) {
  Tracker tracker;
  if (n <= 64 && countPartitions(n, k, g) <= static_cast<double>(limit)) {
    Enumerator(n, k, scorer, tracker).run(g, n - g * k);
    return tracker.result();
  }
  std::set<Groups> seen;
  Groups consecutive;
  for (int group = 0; group < g; ++group) {
    consecutive.emplace_back();
    for (int member = 0; member < k; ++member) consecutive.back().push_back(group * k + member);
  }
  improveBySwaps(consecutive, n, scorer, tracker, seen);
  const Groups grown = greedy(n, k, g, scorer);
  if (!grown.empty()) improveBySwaps(grown, n, scorer, tracker, seen);
  SearchResult& result = tracker.result();
  result.exhaustive = false;
  return result;
}

}  // namespace peerlink::place
