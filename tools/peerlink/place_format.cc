#include "place_format.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "matrix_format.hpp"

namespace peerlink::cli {
namespace {

std::string gpuList(const std::vector<int>& gpus) {
  return fmt::format("{}", fmt::join(gpus, ","));
}

std::string partitionText(const std::vector<std::vector<int>>& groups) {
  std::vector<std::string> parts;
  for (const auto& group : groups) parts.push_back(gpuList(group));
  return fmt::format("{}", fmt::join(parts, " | "));
}

std::string weakestText(const GroupScore& score, std::size_t members) {
  if (members < 2) return "-";
  return score.weakestGBps > 0 ? fmt::format("{:.1f}", score.weakestGBps) : std::string("-");
}

nlohmann::json scoreToJson(const GroupScore& score) {
  return {{"worst_link", worstLinkName(score)},
          {"worst_path", pathClassName(score.worstPath)},
          {"worst_without_p2p", score.worstWithoutP2p},
          {"weakest_gbps", score.weakestGBps},
          {"degraded_pairs", score.degradedPairs},
          {"pairs_at_worst", score.pairsAtWorst},
          {"total_gbps", score.totalGBps}};
}

nlohmann::json pairsToJson(const std::vector<std::pair<int, int>>& pairs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [a, b] : pairs) out.push_back({a, b});
  return out;
}

}  // namespace

std::string formatPlacementText(const Topology& topology, const GpuPlacement& placement) {
  const std::size_t n = topology.gpus.size();
  std::string out = fmt::format("peerlink place: {} GPU{} on {} ({}); {} group{} of {}\n\n", n, n == 1 ? "" : "s",
                                topology.host.empty() ? "?" : topology.host, topology.source, placement.groupCount,
                                placement.groupCount == 1 ? "" : "s", placement.groupSize);
  if (!placement.refusal.empty()) {
    out += "No placement: " + placement.refusal + "\n";
  } else {
    std::vector<std::vector<int>> chosen;
    std::vector<std::vector<std::string>> rows;
    for (std::size_t g = 0; g < placement.groups.size(); ++g) {
      const PlacedGroup& group = placement.groups[g];
      chosen.push_back(group.gpus);
      rows.push_back({fmt::format("{}", g), gpuList(group.gpus),
                      group.gpus.size() < 2 ? std::string("-") : worstLinkName(group.score),
                      weakestText(group.score, group.gpus.size()), group.reason});
    }
    out += fmt::format("Best partition: GPUs {}\n  {}\n\n", partitionText(chosen), placement.summary);
    out += formatTable({"Group", "GPUs", "Worst link", "Weakest GB/s", "Why"}, rows);
    if (!placement.unused.empty()) out += fmt::format("Not placed: GPU {}\n", fmt::join(placement.unused, ", "));

    out += "\nLines to paste before each rank's command (one process per GPU):\n";
    for (std::size_t g = 0; g < placement.groups.size(); ++g) {
      for (const RankPlacement& rank : placement.groups[g].ranks) {
        out += fmt::format("  group {} rank {} (GPU {}): {}\n", g, rank.rank, rank.gpu, rank.line);
      }
    }
    out += "One process per group:\n";
    for (std::size_t g = 0; g < placement.groups.size(); ++g) {
      out += fmt::format("  group {}: CUDA_VISIBLE_DEVICES={}\n", g, placement.groups[g].visibleDevices);
    }
  }
  out += "\nNotes:\n";
  for (const std::string& note : placement.notes) out += "  - " + note + "\n";
  return out;
}

nlohmann::json placementToJson(const Topology& topology, const GpuPlacement& placement) {
  nlohmann::json groups = nlohmann::json::array();
  for (const PlacedGroup& group : placement.groups) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const RankPlacement& rank : group.ranks) {
      const Gpu& gpu = topology.gpus[static_cast<std::size_t>(rank.gpu)];
      ranks.push_back({{"rank", rank.rank},
                       {"gpu", rank.gpu},
                       {"uuid", gpu.uuid},
                       {"pci_bus_id", gpu.pciBusId},
                       {"cuda_visible_devices", rank.visibleDevice},
                       {"numa_node", rank.numaNode},
                       {"cpus", rank.cpus},
                       {"numactl", rank.numactl},
                       {"taskset", rank.taskset},
                       {"line", rank.line}});
    }
    groups.push_back({{"gpus", group.gpus},
                      {"score", scoreToJson(group.score)},
                      {"reason", group.reason},
                      {"cuda_visible_devices", group.visibleDevices},
                      {"ranks", ranks}});
  }
  nlohmann::json nextBest = nullptr;
  if (placement.nextBest) {
    nlohmann::json scores = nlohmann::json::array();
    for (const GroupScore& score : placement.nextBest->scores) scores.push_back(scoreToJson(score));
    nextBest = {{"groups", placement.nextBest->groups},
                {"scores_weakest_first", scores},
                {"difference", placement.nextBest->difference}};
  }
  return {{"schema", "peerlink.placement"},
          {"version", 1},
          {"topology", {{"source", topology.source}, {"host", topology.host}, {"gpus", topology.gpus.size()}}},
          {"request", {{"group_size", placement.groupSize}, {"groups", placement.groupCount}}},
          {"search",
           {{"exhaustive", placement.exhaustive},
            {"partitions", placement.partitions},
            {"partitions_tried", placement.partitionsTried},
            {"equally_good", placement.equallyGood}}},
          {"groups", groups},
          {"unused", placement.unused},
          {"next_best", nextBest},
          {"summary", placement.summary},
          {"notes", placement.notes},
          {"verdicts",
           {{"broken_pairs", pairsToJson(placement.brokenPairs)},
            {"degraded_pairs", pairsToJson(placement.degradedPairs)}}},
          {"refusal", placement.refusal}};
}

}  // namespace peerlink::cli
