// The links between a communicator's GPUs as resources that flows share: each GPU's NVLink ports (out and in),
// each pair's own NVLinks where they bypass a switch, every PCIe link a flow climbs up or down the tree between
// two GPUs (a switch's uplink is shared by every GPU below it), the link between CPU sockets, and each GPU's
// memory. Pure functions of the topology (topology.hpp) and the model's hardware figures (cost_model.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "peerlink/topology.hpp"
#include "plan/cost_model.hpp"

namespace peerlink::plan {

/// One direction of a link, a port or a memory: what flows across it share.
struct Resource {
  std::string name;  ///< "GPU 0 NVLink out", "GPU 0 -> GPU 1 NVLink", "PCIe 0000:04:00.0 up", "GPU 2 memory"
  double gbps = 0;   ///< capacity, GB/s (1e9 bytes per second)
};

/// The resources of the ranks' GPUs and which of them each ordered pair of ranks crosses.
struct Fabric {
  std::vector<int> gpus;  ///< the topology's GPU index of each rank
  std::vector<Resource> resources;
  std::vector<int> memory;           ///< per rank: its GPU's memory resource
  std::vector<double> hostLinkGBps;  ///< per rank: its GPU's PCIe link per direction (to a NIC), 0 unknown
  /// Per ordered pair of ranks (src * ranks + dst): the resources a flow from src to dst crosses, the GPUs'
  /// ports first. Empty for two ranks on one GPU (the memory carries it).
  std::vector<std::vector<int>> routes;

  int ranks() const { return static_cast<int>(gpus.size()); }
  std::size_t routeIndex(int src, int dst) const {
    return static_cast<std::size_t>(src) * gpus.size() + static_cast<std::size_t>(dst);
  }
  const std::vector<int>& route(int src, int dst) const { return routes[routeIndex(src, dst)]; }
};

/// The fabric of the GPUs `gpuIndices` (indices into topology.gpus, a rank each). Throws Error(InvalidInput)
/// naming the pair where two GPUs have no peer access (the collectives need it between every pair) or the
/// topology says nothing of their link's speed, and for fewer than one GPU.
Fabric fabricFor(const Topology& topology, const std::vector<int>& gpuIndices, const CostModel& model);

}  // namespace peerlink::plan
