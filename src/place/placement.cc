// placeGpus (include/peerlink/placement.hpp): the request checked, the partitions searched, and the chosen one
// written out with its reasons and each rank's lines.
#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "peerlink/error.hpp"
#include "peerlink/placement.hpp"
#include "place/link_table.hpp"
#include "place/partition_search.hpp"
#include "place/placement_notes.hpp"

namespace peerlink {
namespace {

// The group count a request means, or Error(InvalidUsage) saying what is wrong with it.
int checkedGroupCount(int gpus, const PlacementRequest& request) {
  const int size = request.groupSize;
  if (size < 1)
    throw Error(ErrorCode::InvalidUsage, fmt::format("a group size of {}: a group needs a GPU at least", size));
  if (size > gpus) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("groups of {} GPUs: the topology has only {} GPU(s)", size, gpus));
  }
  if (request.groups < 0) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("{} groups: the count must be positive", request.groups));
  }
  if (request.groups == 0) {
    if (gpus % size == 0) return gpus / size;
    std::vector<int> divisors;
    for (int d = 1; d <= gpus; ++d) {
      if (gpus % d == 0) divisors.push_back(d);
    }
    throw Error(
        ErrorCode::InvalidUsage,
        fmt::format("groups of {} do not divide the {} GPUs evenly: choose a size that does ({}), or place {} of "
                    "them in {} group(s) with --groups {}x{}",
                    size, gpus, fmt::join(divisors, ", "), gpus / size * size, gpus / size, gpus / size, size));
  }
  if (request.groups * size > gpus) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("{} groups of {} need {} GPUs: the topology has {}",
                                                     request.groups, size, request.groups * size, gpus));
  }
  return request.groups;
}

// How the rank's process names its GPU: the ordinal, unless this process's own numbering was already narrowed
// by CUDA_VISIBLE_DEVICES (then the ordinal would mean another GPU in a fresh shell; the UUID never does).
std::string visibleName(const Topology& topology, int gpu) {
  const Gpu& info = topology.gpus[static_cast<std::size_t>(gpu)];
  if (topology.cudaVisibleDevices && !info.uuid.empty()) return info.uuid;
  return std::to_string(info.cudaOrdinal >= 0 ? info.cudaOrdinal : gpu);
}

RankPlacement rankPlacement(const Topology& topology, int rank, int gpu) {
  const Gpu& info = topology.gpus[static_cast<std::size_t>(gpu)];
  RankPlacement placed;
  placed.rank = rank;
  placed.gpu = gpu;
  placed.visibleDevice = visibleName(topology, gpu);
  placed.numaNode = info.numaNode;
  placed.cpus = info.cpuAffinity;
  if (info.numaNode >= 0) placed.numactl = fmt::format("numactl --cpunodebind={0} --membind={0}", info.numaNode);
  if (!info.cpuAffinity.empty()) placed.taskset = "taskset -c " + info.cpuAffinity;
  placed.line = "CUDA_VISIBLE_DEVICES=" + placed.visibleDevice;
  const std::string& bind = placed.numactl.empty() ? placed.taskset : placed.numactl;
  if (!bind.empty()) placed.line += " " + bind;
  return placed;
}

std::string groupsText(const place::Groups& groups) {
  std::vector<std::string> parts;
  for (const auto& group : groups) parts.push_back(fmt::format("{}", fmt::join(group, ",")));
  return fmt::format("{}", fmt::join(parts, " | "));
}

std::string summaryOf(const Topology& topology, const place::LinkTable& table, const GpuPlacement& placement) {
  if (!placement.refusal.empty()) return placement.refusal;
  const std::string searched =
      placement.exhaustive
          ? fmt::format("{} partition{}, every one tried", placement.partitions, placement.partitions == 1 ? "" : "s")
          : fmt::format("{} partitions tried of {:.3g}, by a heuristic", placement.partitionsTried,
                        placement.partitions);
  if (placement.groupSize == 1)
    return fmt::format("groups of one GPU: no traffic between GPUs to judge ({})", searched);
  if (placement.partitions == 1) return "the only partition: every GPU in one group";
  if (!placement.nextBest) {
    std::vector<int> all(topology.gpus.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    std::string label;
    if (table.allAlike(all, label)) {
      return fmt::format("every pair of GPUs is linked alike ({}): every partition is as good as another ({})", label,
                         searched);
    }
    return fmt::format("every partition is as good as another by its links ({})", searched);
  }
  const std::string ties =
      placement.equallyGood > 1 ? fmt::format(", as good as {} other(s)", placement.equallyGood - 1) : "";
  return fmt::format("best of {}{}; the next best ({}) is worse: {}", searched, ties,
                     groupsText(placement.nextBest->groups), placement.nextBest->difference);
}

}  // namespace

GpuPlacement placeGpus(const Topology& topology, const PlacementRequest& request) {
  const int gpus = static_cast<int>(topology.gpus.size());
  if (gpus == 0) throw Error(ErrorCode::InvalidInput, "the topology has no GPU: nothing to place");
  const int groupCount = checkedGroupCount(gpus, request);
  const place::LinkTable table(topology, request.verdicts);
  const place::SearchResult search = place::searchPartitions(
      gpus, request.groupSize, groupCount, [&table](const std::vector<int>& members) { return table.score(members); },
      request.exhaustiveLimit);

  GpuPlacement placement;
  placement.groupSize = request.groupSize;
  placement.groupCount = groupCount;
  placement.exhaustive = search.exhaustive;
  placement.partitions = place::countPartitions(gpus, request.groupSize, groupCount);
  placement.partitionsTried = search.tried;
  placement.equallyGood = search.equallyGood;
  for (int a = 0; a < gpus; ++a) {
    for (int b = a + 1; b < gpus; ++b) {
      if (table.link(a, b).broken) placement.brokenPairs.emplace_back(a, b);
      if (table.link(a, b).degraded) placement.degradedPairs.emplace_back(a, b);
    }
  }
  if (search.best.empty()) {
    std::vector<std::string> pairs;
    for (const auto& [a, b] : placement.brokenPairs) pairs.push_back(fmt::format("{}-{}", a, b));
    const std::string partition = fmt::format("partition into {} group(s) of {}", groupCount, request.groupSize);
    const std::string broken = fmt::format("the pairs the doctor found BROKEN ({})", fmt::join(pairs, ", "));
    placement.refusal =
        search.exhaustive
            ? fmt::format("no {} keeps apart {}", partition, broken)
            : fmt::format(
                  "the heuristic found no {} that keeps apart {} (one may exist: there are too many to try "
                  "each)",
                  partition, broken);
    placement.refusal += ": fix them (`peerlink doctor` says how), or place fewer GPUs";
  }
  std::vector<bool> grouped(static_cast<std::size_t>(gpus), false);
  for (const std::vector<int>& members : search.best) {
    PlacedGroup group;
    group.gpus = members;
    group.score = *table.score(members);
    group.reason = table.describe(members);
    std::vector<std::string> names;
    for (std::size_t rank = 0; rank < members.size(); ++rank) {
      group.ranks.push_back(rankPlacement(topology, static_cast<int>(rank), members[rank]));
      names.push_back(group.ranks.back().visibleDevice);
      grouped[static_cast<std::size_t>(members[rank])] = true;
    }
    group.visibleDevices = fmt::format("{}", fmt::join(names, ","));
    placement.groups.push_back(std::move(group));
  }
  for (int gpu = 0; gpu < gpus && !search.best.empty(); ++gpu) {
    if (!grouped[static_cast<std::size_t>(gpu)]) placement.unused.push_back(gpu);
  }
  if (search.nextBest) {
    placement.nextBest = PlacementAlternative{*search.nextBest, search.nextScores,
                                              place::describeDifference(search.bestScores, search.nextScores)};
  }
  placement.summary = summaryOf(topology, table, placement);
  placement.notes = place::placementNotes(topology, table, request, placement);
  return placement;
}

}  // namespace peerlink
