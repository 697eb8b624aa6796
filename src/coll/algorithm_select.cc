// Algorithm choice (algorithm_select.hpp): pure rules over the message size and whether the GPUs form an
// NVLink mesh; docs/collectives.md explains each. The thresholds are first estimates, to be tuned from
// `peerlink coll` runs on the device machines.
#include "coll/algorithm_select.hpp"

#include <algorithm>
#include <cstdio>

namespace peerlink::coll {
namespace {

constexpr std::size_t kKiB = 1024;
// Up to here a one-shot all-reduce (and a direct broadcast/reduce) is latency-bound on NVLink: one step
// and one flag wait beat the extra step of two-shot although each rank reads (n-1) times the data.
constexpr std::size_t kOneShotMaxNvlink = 256 * kKiB;
// Over PCIe the (n-1)-fold reads of one-shot share the switches' and root complex's links, so bandwidth
// costs sooner.
constexpr std::size_t kOneShotMaxPcie = 64 * kKiB;
// Direct broadcast/reduce put (n-1) times the data on the root's link; two-shot 2 (n-1)/n.
constexpr std::size_t kDirectRootMax = 256 * kKiB;

std::string formatBytes(std::size_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < sizeof kUnits / sizeof kUnits[0]) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (value == static_cast<double>(static_cast<std::size_t>(value))) {
    std::snprintf(text, sizeof text, "%zu %s", static_cast<std::size_t>(value), kUnits[unit]);
  } else {
    std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  }
  return text;
}

// Whether every ordered pair of `devices` talks over NVLink (directly or through NVSwitch), and if not the
// first pair that does not, for the reason.
struct Fabric {
  bool nvlinkMesh = true;
  std::string detail;
};

int gpuIndexOf(const Topology& topology, int device) {
  for (std::size_t i = 0; i < topology.gpus.size(); ++i) {
    if (topology.gpus[i].cudaOrdinal == device) return static_cast<int>(i);
  }
  return -1;
}

const GpuPair* findPair(const Topology& topology, int src, int dst) {
  for (const GpuPair& pair : topology.pairs) {
    if (pair.src == src && pair.dst == dst) return &pair;
  }
  return nullptr;
}

Fabric fabricOf(const Topology& topology, const std::vector<int>& devices) {
  for (int a : devices) {
    for (int b : devices) {
      if (a == b) continue;
      const int src = gpuIndexOf(topology, a);
      const int dst = gpuIndexOf(topology, b);
      const GpuPair* pair = src >= 0 && dst >= 0 ? findPair(topology, src, dst) : nullptr;
      const std::string pairName = "GPU " + std::to_string(a) + " -> " + std::to_string(b);
      if (pair == nullptr) return {false, pairName + " unknown to the topology"};
      if (pair->path != PathClass::NVL || pair->nvlinks == 0) return {false, pairName + " " + linkLabel(*pair)};
    }
  }
  return {true, "NVLink between every pair"};
}

std::string perRank(std::size_t bytes) {
  return formatBytes(bytes) + " per rank";
}

// "1.75x": how many times its data a rank moves, for reasons.
std::string times(double factor) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3gx", factor);
  return text;
}

AlgorithmChoice allReduceRule(std::size_t bytes, int n, const Fabric& fabric) {
  const std::size_t limit = fabric.nvlinkMesh ? kOneShotMaxNvlink : kOneShotMaxPcie;
  if (bytes <= limit) {
    return {Algorithm::OneShot,
            perRank(bytes) + " <= " + formatBytes(limit) + " (" + fabric.detail + "): one-shot (latency-bound)"};
  }
  const std::string share = "reads " + times(2.0 * (n - 1) / n) + " the data per rank";
  if (fabric.nvlinkMesh) {
    return {Algorithm::TwoShot,
            perRank(bytes) + " > " + formatBytes(limit) + " on an NVLink mesh: two-shot (" + share + ", 2 steps)"};
  }
  return {Algorithm::Ring, perRank(bytes) + " > " + formatBytes(limit) + ", no NVLink mesh (" + fabric.detail +
                               "): ring (" + share + ", neighbours only)"};
}

AlgorithmChoice scatterGatherRule(std::size_t bytes, const Fabric& fabric) {
  if (fabric.nvlinkMesh) {
    return {Algorithm::OneShot, perRank(bytes) + " on an NVLink mesh: direct (every peer one hop, one step)"};
  }
  if (bytes <= kOneShotMaxPcie) {
    return {Algorithm::OneShot, perRank(bytes) + " <= " + formatBytes(kOneShotMaxPcie) + " (" + fabric.detail +
                                    "): direct (latency-bound)"};
  }
  return {Algorithm::Ring, perRank(bytes) + " > " + formatBytes(kOneShotMaxPcie) + ", no NVLink mesh (" +
                               fabric.detail + "): ring (neighbours only)"};
}

AlgorithmChoice rootedRule(std::size_t bytes, int n) {
  if (n <= 2) return {Algorithm::OneShot, "2 ranks: direct (two-shot would move the same data in two steps)"};
  if (bytes <= kDirectRootMax) {
    return {Algorithm::OneShot, perRank(bytes) + " <= " + formatBytes(kDirectRootMax) + ": direct (latency-bound)"};
  }
  return {Algorithm::TwoShot, perRank(bytes) + " > " + formatBytes(kDirectRootMax) +
                                  ": two-shot (the root's link carries " + times(2.0 * (n - 1) / n) +
                                  " the data, not " + times(n - 1) + ")"};
}

}  // namespace

std::vector<Algorithm> algorithmsOf(Collective collective) {
  switch (collective) {
    case Collective::AllReduce: return {Algorithm::TwoShot, Algorithm::Ring, Algorithm::OneShot};
    case Collective::ReduceScatter:
    case Collective::AllGather: return {Algorithm::OneShot, Algorithm::Ring};
    case Collective::Broadcast:
    case Collective::Reduce: return {Algorithm::TwoShot, Algorithm::OneShot};
    case Collective::AllToAll:
    case Collective::SendRecv: return {Algorithm::OneShot};
  }
  return {Algorithm::OneShot};
}

AlgorithmChoice chooseAlgorithm(Collective collective, std::size_t bytesPerRank, const Topology& topology,
                                const std::vector<int>& devices, Algorithm forced) {
  const std::vector<Algorithm> available = algorithmsOf(collective);
  if (forced != Algorithm::Auto && std::find(available.begin(), available.end(), forced) != available.end()) {
    return {forced, std::string("forced by PEERLINK_ALGO=") + algorithmName(forced)};
  }
  const std::string ignored = forced == Algorithm::Auto
                                  ? std::string()
                                  : std::string("PEERLINK_ALGO=") + algorithmName(forced) + " is not an algorithm of " +
                                        collectiveName(collective) + "; ";
  const int n = static_cast<int>(devices.size());
  AlgorithmChoice choice;
  if (available.size() == 1) {
    choice = {available.front(), "the collective's only algorithm"};
  } else if (n <= 1) {
    choice = {Algorithm::OneShot, "1 rank: a local copy"};
  } else {
    switch (collective) {
      case Collective::AllReduce: choice = allReduceRule(bytesPerRank, n, fabricOf(topology, devices)); break;
      case Collective::ReduceScatter:
      case Collective::AllGather: choice = scatterGatherRule(bytesPerRank, fabricOf(topology, devices)); break;
      case Collective::Broadcast:
      case Collective::Reduce: choice = rootedRule(bytesPerRank, n); break;
      case Collective::AllToAll:
      case Collective::SendRecv: choice = {available.front(), "the collective's only algorithm"}; break;
    }
  }
  choice.reason = ignored + choice.reason;
  return choice;
}

}  // namespace peerlink::coll
