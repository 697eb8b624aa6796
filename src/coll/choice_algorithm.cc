// The algorithm a collective call uses (choice_rules.hpp), by its size and the fabric, and the fabric itself
// (collective_choice.hpp): pure rules over the bytes per rank and whether the ranks' GPUs form an NVLink mesh.
// docs/collectives.md explains each; the sizes are choice_thresholds.hpp's.
#include <algorithm>
#include <cstdio>

#include "coll/choice_rules.hpp"
#include "coll/choice_thresholds.hpp"

namespace peerlink::coll {

using namespace threshold;

namespace {

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

std::string perRank(std::size_t bytes) {
  return formatByteSize(bytes) + " per rank";
}

// "1.75x": how many times its data a rank moves, for reasons.
std::string times(double factor) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3gx", factor);
  return text;
}

AlgorithmChoice allReduceRule(std::size_t bytes, int n, const CollectiveFabric& fabric) {
  const std::size_t limit = fabric.nvlinkMesh ? kOneShotMaxNvlink : kOneShotMaxPcie;
  if (bytes <= limit) {
    return {Algorithm::OneShot,
            perRank(bytes) + " <= " + formatByteSize(limit) + " (" + fabric.detail + "): one-shot (latency-bound)"};
  }
  const std::string share = times(2.0 * (n - 1) / n) + " the data per rank";
  if (fabric.nvlinkMesh && n > 2 && bytes >= kRingAllReduceFrom) {
    return {Algorithm::Ring, perRank(bytes) + " >= " + formatByteSize(kRingAllReduceFrom) +
                                 " on an NVLink mesh: ring (stores " + share + " along the ranks)"};
  }
  if (fabric.nvlinkMesh) {
    return {Algorithm::TwoShot, perRank(bytes) + " > " + formatByteSize(limit) +
                                    " on an NVLink mesh: two-shot (reads " + share + ", 2 steps)"};
  }
  return {Algorithm::Ring, perRank(bytes) + " > " + formatByteSize(limit) + ", no NVLink mesh (" + fabric.detail +
                               "): ring (stores " + share + ", neighbours only)"};
}

AlgorithmChoice scatterGatherRule(std::size_t bytes, const CollectiveFabric& fabric) {
  if (fabric.nvlinkMesh) {
    return {Algorithm::OneShot, perRank(bytes) + " on an NVLink mesh: direct (every peer one hop, one step)"};
  }
  if (bytes <= kOneShotMaxPcie) {
    return {Algorithm::OneShot, perRank(bytes) + " <= " + formatByteSize(kOneShotMaxPcie) + " (" + fabric.detail +
                                    "): direct (latency-bound)"};
  }
  return {Algorithm::Ring, perRank(bytes) + " > " + formatByteSize(kOneShotMaxPcie) + ", no NVLink mesh (" +
                               fabric.detail + "): ring (neighbours only)"};
}

// Reduce-scatter: the ring from kRingReduceScatterFrom per block on 3+ ranks of an NVLink mesh, else as
// all-gather.
AlgorithmChoice reduceScatterRule(std::size_t bytes, int n, const CollectiveFabric& fabric) {
  if (fabric.nvlinkMesh && n > 2 && bytes >= kRingReduceScatterFrom) {
    return {Algorithm::Ring, perRank(bytes) + " >= " + formatByteSize(kRingReduceScatterFrom) +
                                 " on an NVLink mesh: ring (stores " + times(n - 1) +
                                 " the block per rank along the ranks)"};
  }
  return scatterGatherRule(bytes, fabric);
}

AlgorithmChoice rootedRule(std::size_t bytes, int n) {
  if (n <= 2) return {Algorithm::OneShot, "2 ranks: direct (two-shot would move the same data in two steps)"};
  if (bytes <= kDirectRootMax) {
    return {Algorithm::OneShot, perRank(bytes) + " <= " + formatByteSize(kDirectRootMax) + ": direct (latency-bound)"};
  }
  return {Algorithm::TwoShot, perRank(bytes) + " > " + formatByteSize(kDirectRootMax) +
                                  ": two-shot (the root's link carries the data once, not " + times(n - 1) + ")"};
}

// Broadcast and reduce: the ring from `ringFrom` on 3+ ranks of an NVLink mesh, else rootedRule.
AlgorithmChoice rootedRingRule(std::size_t bytes, int n, const CollectiveFabric& fabric, std::size_t ringFrom) {
  if (n > 2 && fabric.nvlinkMesh && bytes >= ringFrom) {
    return {Algorithm::Ring, perRank(bytes) + " >= " + formatByteSize(ringFrom) +
                                 " on an NVLink mesh: ring (pipelined along the ranks)"};
  }
  return rootedRule(bytes, n);
}

}  // namespace

std::vector<Algorithm> algorithmsOf(Collective collective) {
  switch (collective) {
    case Collective::AllReduce: return {Algorithm::TwoShot, Algorithm::Ring, Algorithm::OneShot};
    case Collective::ReduceScatter:
    case Collective::AllGather: return {Algorithm::OneShot, Algorithm::Ring};
    case Collective::Broadcast: return {Algorithm::TwoShot, Algorithm::Ring, Algorithm::OneShot};
    case Collective::Reduce: return {Algorithm::TwoShot, Algorithm::Ring, Algorithm::OneShot};
    case Collective::AllToAll:
    case Collective::SendRecv: return {Algorithm::OneShot};
  }
  return {Algorithm::OneShot};
}

AlgorithmChoice chooseAlgorithm(Collective collective, std::size_t bytes, int nranks, const CollectiveFabric& fabric,
                                Algorithm forced) {
  const std::vector<Algorithm> available = algorithmsOf(collective);
  if (forced != Algorithm::Auto && std::find(available.begin(), available.end(), forced) != available.end()) {
    return {forced, std::string("forced by PEERLINK_ALGO=") + algorithmSetting(forced), true};
  }
  const std::string ignored = forced == Algorithm::Auto
                                  ? std::string()
                                  : std::string("PEERLINK_ALGO=") + algorithmSetting(forced) +
                                        " is not an algorithm of " + collectiveName(collective) + "; ";
  AlgorithmChoice choice;
  if (available.size() == 1) {
    choice = {available.front(), "the collective's only algorithm"};
  } else if (nranks <= 1) {
    choice = {Algorithm::OneShot, "1 rank: a local copy"};
  } else {
    switch (collective) {
      case Collective::AllReduce: choice = allReduceRule(bytes, nranks, fabric); break;
      case Collective::ReduceScatter: choice = reduceScatterRule(bytes, nranks, fabric); break;
      case Collective::AllGather: choice = scatterGatherRule(bytes, fabric); break;
      case Collective::Broadcast: choice = rootedRingRule(bytes, nranks, fabric, kRingBroadcastFrom); break;
      case Collective::Reduce: choice = rootedRingRule(bytes, nranks, fabric, kRingReduceFrom); break;
      case Collective::AllToAll:
      case Collective::SendRecv: choice = {available.front(), "the collective's only algorithm"}; break;
    }
  }
  choice.reason = ignored + choice.reason;
  return choice;
}

AlgorithmChoice chooseAlgorithm(Collective collective, std::size_t bytes, const Topology& topology,
                                const std::vector<int>& devices, Algorithm forced) {
  return chooseAlgorithm(collective, bytes, static_cast<int>(devices.size()), fabricOf(topology, devices), forced);
}

}  // namespace peerlink::coll

namespace peerlink {

CollectiveFabric fabricOf(const Topology& topology, const std::vector<int>& devices) {
  CollectiveFabric fabric;
  fabric.nvlinkMesh = true;
  fabric.detail = "NVLink between every pair";
  for (int a : devices) {
    for (int b : devices) {
      if (a == b) continue;  // two ranks on one GPU: local memory
      const int src = coll::gpuIndexOf(topology, a);
      const int dst = coll::gpuIndexOf(topology, b);
      const GpuPair* pair = src >= 0 && dst >= 0 ? coll::findPair(topology, src, dst) : nullptr;
      const std::string pairName = "GPU " + std::to_string(a) + " -> " + std::to_string(b);
      if (pair == nullptr) return {false, pairName + " unknown to the topology", false};
      if (pair->path != PathClass::NVL || pair->nvlinks == 0) return {false, pairName + " " + linkLabel(*pair), false};
    }
  }
  // LL128 trusts the path between two GPUs' SMs to deliver a warp's 128-byte store whole (coll_ll128.cu); NCCL
  // trusts NVLink on Volta to Hopper, peerlink only what it has run on (Hopper).
  fabric.ll128Capable = std::all_of(devices.begin(), devices.end(), [&](int device) {
    const int index = coll::gpuIndexOf(topology, device);
    return index >= 0 && topology.gpus[static_cast<std::size_t>(index)].ccMajor >= 9;
  });
  return fabric;
}

}  // namespace peerlink
