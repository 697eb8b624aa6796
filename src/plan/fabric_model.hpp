// The links between a communicator's GPUs as resources that flows share: each GPU's NVLink ports (out and in),
// each pair's own NVLinks where they bypass a switch, every PCIe link a flow climbs up or down the tree between
// two GPUs (a switch's uplink is shared by every GPU below it), the link between CPU sockets, each GPU's memory, and
// where some pair reaches the other only through host memory, each GPU's PCIe link to and from the host. Pure functions
// of the topology (topology.hpp) and the model's hardware figures (cost_model.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
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
  /// ports first. Empty for two ranks on one GPU (the memory carries it) and for a pair through host memory.
  std::vector<std::vector<int>> routes;
  /// Per ordered pair of ranks: the pair reaches the other only through host memory (no peer access, or
  /// PEERLINK_COLL_HOST_STAGED names it).
  std::vector<bool> hostStaged;
  /// Some pair is host-staged: the communicator runs every call through host memory (host_traffic.hpp).
  bool throughHost = false;
  /// Per rank, where throughHost: its GPU's PCIe link to the host (device to host) and from it.
  std::vector<int> toHost;
  std::vector<int> fromHost;

  int ranks() const { return static_cast<int>(gpus.size()); }
  std::size_t routeIndex(int src, int dst) const {
    return static_cast<std::size_t>(src) * gpus.size() + static_cast<std::size_t>(dst);
  }
  const std::vector<int>& route(int src, int dst) const { return routes[routeIndex(src, dst)]; }
};

/// The fabric of the GPUs `gpuIndices` (indices into topology.gpus, a rank each). A pair without peer access, and
/// every pair of ranks `hostStagedPairs` names (both ways, PEERLINK_COLL_HOST_STAGED), goes through host memory:
/// the fabric is then throughHost, with each GPU's PCIe link to and from the host. Throws Error(InvalidInput) naming
/// the pair whose peer link's speed the topology does not say, the GPU whose PCIe link's it does not say where the
/// host carries the calls, and for fewer than one GPU.
Fabric fabricFor(const Topology& topology, const std::vector<int>& gpuIndices, const CostModel& model,
                 const std::vector<std::pair<int, int>>& hostStagedPairs = {});

}  // namespace peerlink::plan
