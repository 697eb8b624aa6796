// LinkTable, group scores and their comparison (link_table.hpp, placement.hpp).
#include "place/link_table.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

namespace peerlink {
namespace {

bool sameGBps(double a, double b) {
  return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::max(std::fabs(a), std::fabs(b)));
}

// Tiers order links best first: the path classes with P2P, then the same without P2P (host staging within a
// switch still beats host staging across sockets).
int tierOf(bool p2p, PathClass path) {
  return static_cast<int>(path) + (p2p ? 0 : place::kNoP2pTier);
}

int tierOf(const GroupScore& score) {
  return tierOf(!score.worstWithoutP2p, score.worstPath);
}

std::string ordinal(std::size_t n) {
  if (n == 1) return "weakest";
  const char* suffix = n == 2 ? "nd" : n == 3 ? "rd" : "th";
  return fmt::format("{}{} weakest", n, suffix);
}

double percentLess(double less, double more) {
  return more > 0 ? 100.0 * (more - less) / more : 0.0;
}

}  // namespace

int compareGroupScores(const GroupScore& a, const GroupScore& b) {
  const int tierA = tierOf(a);
  const int tierB = tierOf(b);
  if (tierA != tierB) return tierA < tierB ? -1 : 1;
  if (!sameGBps(a.weakestGBps, b.weakestGBps)) return a.weakestGBps > b.weakestGBps ? -1 : 1;
  if (a.degradedPairs != b.degradedPairs) return a.degradedPairs < b.degradedPairs ? -1 : 1;
  if (a.pairsAtWorst != b.pairsAtWorst) return a.pairsAtWorst < b.pairsAtWorst ? -1 : 1;
  if (!sameGBps(a.totalGBps, b.totalGBps)) return a.totalGBps > b.totalGBps ? -1 : 1;
  return 0;
}

std::string worstLinkName(const GroupScore& score) {
  return place::tierName(tierOf(score));
}

namespace place {

std::string tierName(int tier) {
  if (tier >= kNoP2pTier)
    return fmt::format("{} without P2P", pathClassName(static_cast<PathClass>(tier - kNoP2pTier)));
  return pathClassName(static_cast<PathClass>(tier));
}

LinkTable::LinkTable(const Topology& topology, const std::optional<std::vector<PairVerdict>>& verdicts)
    : topology_(topology), count_(static_cast<int>(topology.gpus.size())) {
  links_.assign(static_cast<std::size_t>(count_ * count_), PairLink{0, std::numeric_limits<double>::infinity()});
  for (const GpuPair& pair : topology.pairs) {
    PairLink& entry = links_[static_cast<std::size_t>(pair.src * count_ + pair.dst)];
    PairLink& back = links_[static_cast<std::size_t>(pair.dst * count_ + pair.src)];
    for (PairLink* link : {&entry, &back}) {
      link->tier = std::max(link->tier, tierOf(pair.canAccessPeer, pair.path));
      link->gbps = std::min(link->gbps, pair.expectedGBps);
    }
  }
  for (PairLink& link : links_) {
    if (std::isinf(link.gbps)) link.gbps = 0;  // the diagonal
  }
  if (!verdicts) return;
  for (const PairVerdict& verdict : *verdicts) {
    if (verdict.src < 0 || verdict.dst < 0 || verdict.src >= count_ || verdict.dst >= count_ ||
        verdict.src == verdict.dst) {
      continue;
    }
    for (PairLink* link : {&links_[static_cast<std::size_t>(verdict.src * count_ + verdict.dst)],
                           &links_[static_cast<std::size_t>(verdict.dst * count_ + verdict.src)]}) {
      link->broken = link->broken || verdict.verdict == Verdict::Broken;
      link->degraded = !link->broken && (link->degraded || verdict.verdict == Verdict::Degraded);
    }
  }
}

const PairLink& LinkTable::link(int a, int b) const {
  return links_[static_cast<std::size_t>(a * count_ + b)];
}

std::optional<GroupScore> LinkTable::score(const std::vector<int>& members) const {
  GroupScore score;
  int worstTier = 0;
  double weakest = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < members.size(); ++i) {
    for (std::size_t j = i + 1; j < members.size(); ++j) {
      const PairLink& pair = link(members[i], members[j]);
      if (pair.broken) return std::nullopt;
      worstTier = std::max(worstTier, pair.tier);
      weakest = std::min(weakest, pair.gbps);
      score.degradedPairs += pair.degraded ? 1 : 0;
      score.totalGBps += pair.gbps;
    }
  }
  for (std::size_t i = 0; i < members.size(); ++i) {
    for (std::size_t j = i + 1; j < members.size(); ++j)
      score.pairsAtWorst += link(members[i], members[j]).tier == worstTier;
  }
  score.worstWithoutP2p = worstTier >= kNoP2pTier;
  score.worstPath = static_cast<PathClass>(worstTier - (score.worstWithoutP2p ? kNoP2pTier : 0));
  score.weakestGBps = std::isinf(weakest) ? 0 : weakest;
  return score;
}

std::string LinkTable::pairLabel(int a, int b) const {
  const std::string label = linkLabel(topology_.pair(a, b));
  return link(a, b).tier >= kNoP2pTier ? label + " without P2P" : label;
}

std::string LinkTable::whereItRuns(int a, int b) const {
  const GpuPair& pair = topology_.pair(a, b);
  const Gpu& gpuA = topology_.gpus[static_cast<std::size_t>(a)];
  const Gpu& gpuB = topology_.gpus[static_cast<std::size_t>(b)];
  std::string where;
  if (pair.path == PathClass::NVL) {
    where = pair.viaNvswitch ? "NVLink through NVSwitch" : "direct NVLink";
  } else if (pair.path == PathClass::NVB) {
    where = "NVLink through another GPU";
  } else if (gpuA.pciPath.empty() || gpuB.pciPath.empty()) {
    where = "PCI path unknown";
  } else {
    std::size_t common = 0;
    while (common < gpuA.pciPath.size() && common < gpuB.pciPath.size() &&
           gpuA.pciPath[common] == gpuB.pciPath[common]) {
      ++common;
    }
    const std::string ancestor = common > 0 ? gpuA.pciPath[common - 1] : "";
    switch (pair.path) {
      case PathClass::PIX: where = fmt::format("below one PCIe switch ({})", ancestor); break;
      case PathClass::PXB: where = fmt::format("through several PCIe switches below {}", ancestor); break;
      case PathClass::PHB: where = fmt::format("through the host bridge {}", ancestor); break;
      case PathClass::NODE: where = fmt::format("across host bridges of NUMA node {}", gpuA.numaNode); break;
      default:
        where = gpuA.numaNode >= 0 && gpuB.numaNode >= 0
                    ? fmt::format("across sockets (NUMA nodes {} and {})", gpuA.numaNode, gpuB.numaNode)
                    : "across host bridges of unknown NUMA nodes";
    }
  }
  const PairLink& entry = link(a, b);
  if (entry.tier >= kNoP2pTier) return where + "; no P2P: through host memory";
  if (entry.gbps > 0) return fmt::format("{}; {:.1f} GB/s ({})", where, entry.gbps, pair.bandwidthBasis);
  return fmt::format("{}; bandwidth unknown ({})", where, pair.bandwidthBasis);
}

std::string LinkTable::describe(const std::vector<int>& members) const {
  if (members.size() < 2) return "one GPU: no traffic between GPUs to judge";
  if (members.size() == 2) return pairLabel(members[0], members[1]) + ": " + whereItRuns(members[0], members[1]);
  // The mix of links, best first, then the weakest pair (the lowest tier's least bandwidth).
  std::map<std::pair<int, std::string>, int> mix;
  int weakestA = members[0];
  int weakestB = members[1];
  std::vector<std::string> degraded;
  for (std::size_t i = 0; i < members.size(); ++i) {
    for (std::size_t j = i + 1; j < members.size(); ++j) {
      const int a = members[i];
      const int b = members[j];
      const PairLink& pair = link(a, b);
      ++mix[{pair.tier, pairLabel(a, b)}];
      const PairLink& weakest = link(weakestA, weakestB);
      if (pair.tier > weakest.tier ||
          (pair.tier == weakest.tier && pair.gbps < weakest.gbps && !sameGBps(pair.gbps, weakest.gbps))) {
        weakestA = a;
        weakestB = b;
      }
      if (pair.degraded) degraded.push_back(fmt::format("{}-{}", a, b));
    }
  }
  const std::size_t pairs = members.size() * (members.size() - 1) / 2;
  std::string text;
  if (mix.size() == 1) {
    text = fmt::format("all {} pairs {}: {}", pairs, mix.begin()->first.second, whereItRuns(weakestA, weakestB));
  } else {
    std::string counts;
    for (const auto& [key, n] : mix) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, key.second);
    text = fmt::format("{} pairs: {}; weakest {}-{}, {}: {}", pairs, counts, weakestA, weakestB,
                       pairLabel(weakestA, weakestB), whereItRuns(weakestA, weakestB));
  }
  if (!degraded.empty()) text += fmt::format("; DEGRADED by the doctor: {}", fmt::join(degraded, ", "));
  return text;
}

bool LinkTable::allAlike(const std::vector<int>& gpus, std::string& label) const {
  if (gpus.size() < 2) return false;
  const PairLink& first = link(gpus[0], gpus[1]);
  const std::string firstLabel = pairLabel(gpus[0], gpus[1]);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (std::size_t j = i + 1; j < gpus.size(); ++j) {
      const PairLink& pair = link(gpus[i], gpus[j]);
      if (pair.tier != first.tier || !sameGBps(pair.gbps, first.gbps) || pair.degraded ||
          pairLabel(gpus[i], gpus[j]) != firstLabel) {
        return false;
      }
    }
  }
  label = first.tier >= kNoP2pTier ? firstLabel + ", through host memory"
          : first.gbps > 0         ? fmt::format("{}, {:.1f} GB/s", firstLabel, first.gbps)
                                   : firstLabel + ", bandwidth unknown";
  return true;
}

std::string describeDifference(const std::vector<GroupScore>& best, const std::vector<GroupScore>& other) {
  for (std::size_t i = 0; i < best.size() && i < other.size(); ++i) {
    const GroupScore& b = best[i];
    const GroupScore& o = other[i];
    if (compareGroupScores(b, o) == 0) continue;
    const std::string group = fmt::format("its {} group", ordinal(i + 1));
    if (tierOf(b) != tierOf(o)) {
      return fmt::format("{} has a {} pair where this partition's has at worst {}", group, worstLinkName(o),
                         worstLinkName(b));
    }
    if (!sameGBps(b.weakestGBps, o.weakestGBps)) {
      return fmt::format("{}'s weakest pair carries {:.1f} GB/s where this partition's carries {:.1f} ({:.0f}% less)",
                         group, o.weakestGBps, b.weakestGBps, percentLess(o.weakestGBps, b.weakestGBps));
    }
    if (b.degradedPairs != o.degradedPairs) {
      return fmt::format("{} has {} pair(s) the doctor found DEGRADED where this partition's has {}", group,
                         o.degradedPairs, b.degradedPairs);
    }
    if (b.pairsAtWorst != o.pairsAtWorst) {
      return fmt::format("{} has {} pairs at {} where this partition's has {}", group, o.pairsAtWorst, worstLinkName(o),
                         b.pairsAtWorst);
    }
    return fmt::format("{}'s pairs carry {:.1f} GB/s in all where this partition's carry {:.1f} ({:.0f}% less)", group,
                       o.totalGBps, b.totalGBps, percentLess(o.totalGBps, b.totalGBps));
  }
  return {};
}

}  // namespace place
}  // namespace peerlink
