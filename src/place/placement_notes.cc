// placementNotes (placement_notes.hpp).
#include "place/placement_notes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace peerlink::place {
namespace {

// "0-1, 2-3" (at most eight, then how many more).
std::string pairList(const std::vector<std::pair<int, int>>& pairs) {
  constexpr std::size_t kShown = 8;
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < pairs.size() && i < kShown; ++i) {
    shown.push_back(fmt::format("{}-{}", pairs[i].first, pairs[i].second));
  }
  std::string text = fmt::format("{}", fmt::join(shown, ", "));
  if (pairs.size() > kShown) text += fmt::format(" and {} more", pairs.size() - kShown);
  return text.empty() ? "none" : text;
}

// "<what> for GPU 0, 1<consequence>", when there are such GPUs.
void addGpuNote(std::vector<std::string>& notes, const std::string& what, const std::vector<int>& gpus,
                const std::string& consequence) {
  if (!gpus.empty()) notes.push_back(fmt::format("{} for GPU {}{}", what, fmt::join(gpus, ", "), consequence));
}

std::string verdictNote(const Topology& topology, const PlacementRequest& request, const GpuPlacement& placement) {
  const std::string& from = request.verdictsFrom;
  if (!request.verdicts) {
    return fmt::format("no doctor verdicts{}{}: a pair that is broken in fact could not be kept apart",
                       from.empty() ? "" : ": ", from);
  }
  const int gpus = static_cast<int>(topology.gpus.size());
  std::vector<std::vector<bool>> judged(static_cast<std::size_t>(gpus),
                                        std::vector<bool>(static_cast<std::size_t>(gpus)));
  for (const PairVerdict& verdict : *request.verdicts) {
    if (verdict.src < 0 || verdict.dst < 0 || verdict.src >= gpus || verdict.dst >= gpus) continue;
    judged[static_cast<std::size_t>(verdict.src)][static_cast<std::size_t>(verdict.dst)] = true;
    judged[static_cast<std::size_t>(verdict.dst)][static_cast<std::size_t>(verdict.src)] = true;
  }
  std::vector<std::pair<int, int>> missing;
  for (int a = 0; a < gpus; ++a) {
    for (int b = a + 1; b < gpus; ++b) {
      if (!judged[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)]) missing.emplace_back(a, b);
    }
  }
  const std::size_t pairs = static_cast<std::size_t>(gpus * (gpus - 1) / 2);
  std::string note = fmt::format(
      "doctor verdicts{}{} for {} of {} pairs; BROKEN, never grouped: {}; DEGRADED, counted against their group: {}",
      from.empty() ? "" : " from ", from, pairs - missing.size(), pairs, pairList(placement.brokenPairs),
      pairList(placement.degradedPairs));
  if (!missing.empty()) note += fmt::format("; no verdict for {} (run `peerlink doctor`)", pairList(missing));
  return note;
}

}  // namespace

std::vector<std::string> placementNotes(const Topology& topology, const LinkTable& table,
                                        const PlacementRequest& request, const GpuPlacement& placement) {
  std::vector<std::string> notes;
  const int gpus = static_cast<int>(topology.gpus.size());
  std::vector<int> pcieUnknown;
  std::vector<int> pathUnknown;
  bool flat = true;
  bool pcieJudged = false;  // some pair without NVLink was judged by its PCIe path
  for (int a = 0; a < gpus; ++a) {
    const Gpu& gpu = topology.gpus[static_cast<std::size_t>(a)];
    bool bandwidthUnknown = false;
    for (int b = 0; b < gpus; ++b) {
      if (a == b) continue;
      const GpuPair& pair = topology.pair(a, b);
      if (pair.nvlinks > 0) continue;
      pcieJudged = true;
      bandwidthUnknown = bandwidthUnknown || (table.link(a, b).tier < kNoP2pTier && table.link(a, b).gbps <= 0);
    }
    if (bandwidthUnknown) pcieUnknown.push_back(a);
    if (gpu.pciPath.empty()) pathUnknown.push_back(a);
    flat = flat && gpu.pciPath.size() == 2;
  }
  addGpuNote(notes, "PCIe link speed or width unknown", pcieUnknown,
             ": the bandwidth of their pairs without NVLink could not be compared, so they were judged by path "
             "class alone");
  addGpuNote(notes, "PCI path unknown", pathUnknown,
             " (sysfs not read): their pairs without NVLink are classed SYS, the worst case, so groups holding them "
             "may be undervalued");
  if (flat && pcieJudged) {
    notes.push_back(
        "the PCI tree is flat (every GPU sits directly on a host bridge, as in a VM): the path classes of pairs "
        "without NVLink say nothing of the real links; measure them with `peerlink bench`");
  }

  std::vector<int> unbound;
  std::vector<int> cpusOnly;
  for (const PlacedGroup& group : placement.groups) {
    for (const RankPlacement& rank : group.ranks) {
      if (rank.numaNode < 0 && rank.cpus.empty()) unbound.push_back(rank.gpu);
      if (rank.numaNode < 0 && !rank.cpus.empty()) cpusOnly.push_back(rank.gpu);
    }
  }
  addGpuNote(notes, "NUMA node and local CPUs unknown", unbound,
             ": their ranks get no CPU binding (bind them by hand; `nvidia-smi topo -m` and `numactl -H` on the "
             "machine may tell)");
  addGpuNote(notes, "NUMA node unknown", cpusOnly, ": taskset binds their ranks' CPUs, not their memory");
  if (topology.cudaVisibleDevices) {
    notes.push_back(
        fmt::format("this topology was seen through CUDA_VISIBLE_DEVICES={}: the lines name GPUs by UUID, "
                    "which means the same GPU whatever the launching shell's numbering",
                    *topology.cudaVisibleDevices));
  }
  if (!placement.exhaustive) {
    notes.push_back(
        fmt::format("{:.3g} partitions are too many to try each: this is the best of a greedy grouping "
                    "improved by swaps ({} partitions tried), not proven best",
                    placement.partitions, placement.partitionsTried));
  }
  notes.push_back(verdictNote(topology, request, placement));
  for (const std::string& note : topology.notes) notes.push_back("discovery: " + note);
  return notes;
}

}  // namespace peerlink::place
