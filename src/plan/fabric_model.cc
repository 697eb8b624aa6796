#include "plan/fabric_model.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "peerlink/error.hpp"
#include "topology/link_model.hpp"

namespace peerlink::plan {
namespace {

class FabricBuilder {
 public:
  FabricBuilder(const Topology& topology, const CostModel& model, Fabric& fabric)
      : topology_(topology), model_(model), fabric_(fabric) {}

  // The resource called `name`, made with `gbps` the first time; a later caller with a faster link raises it
  // (a bridge above GPUs of different links carries at least the fastest).
  int resource(const std::string& name, double gbps) {
    const auto found = byName_.find(name);
    if (found != byName_.end()) {
      Resource& existing = fabric_.resources[static_cast<std::size_t>(found->second)];
      existing.gbps = std::max(existing.gbps, gbps);
      return found->second;
    }
    fabric_.resources.push_back({name, gbps});
    const int index = static_cast<int>(fabric_.resources.size()) - 1;
    byName_[name] = index;
    return index;
  }

  const Gpu& gpu(int index) const { return topology_.gpus.at(static_cast<std::size_t>(index)); }

  // The route from GPU a to GPU b over their peer link.
  std::vector<int> route(int a, int b) {
    const GpuPair& pair = topology_.pair(a, b);
    if (pair.expectedGBps <= 0) {
      throw Error(ErrorCode::InvalidInput,
                  fmt::format("GPU {} -> GPU {}: the topology does not say how fast their link is ({}); a topology "
                              "written by `peerlink topo --json` on the machine has it",
                              a, b, pair.bandwidthBasis.empty() ? "no link information" : pair.bandwidthBasis));
    }
    return pair.nvlinks > 0 ? nvlinkRoute(a, b, pair) : pcieRoute(a, b, pair);
  }

 private:
  // A GPU's NVLink port carries its active links; through NVSwitch every flow out of (into) a GPU shares it,
  // and a pair's own links bound it where there is no switch.
  std::vector<int> nvlinkRoute(int a, int b, const GpuPair& pair) {
    const double perLink = pair.expectedGBps / pair.nvlinks;
    const auto port = [&](int index) {
      const int links = gpu(index).nvlink.activeLinks;
      return links > 0 ? links * perLink : pair.expectedGBps;
    };
    std::vector<int> route = {resource(fmt::format("GPU {} NVLink out", a), port(a)),
                              resource(fmt::format("GPU {} NVLink in", b), port(b))};
    if (!pair.viaNvswitch) route.push_back(resource(fmt::format("GPU {} -> GPU {} NVLink", a, b), pair.expectedGBps));
    return route;
  }

  // Up the PCIe tree from a to the first bridge both share, then down to b: each link on the way, a switch's
  // uplink shared by the GPUs below it. The bridges' own widths are not in the topology: each is taken to carry
  // what the GPU links below it do.
  std::vector<int> pcieRoute(int a, int b, const GpuPair& pair) {
    const Gpu& from = gpu(a);
    const Gpu& to = gpu(b);
    const double fromGBps = linkGBps(from, pair);
    const double toGBps = linkGBps(to, pair);
    std::vector<int> route = {resource(fmt::format("GPU {} PCIe out", a), fromGBps)};
    const std::vector<std::string>& up = from.pciPath;
    const std::vector<std::string>& down = to.pciPath;
    if (up.empty() || down.empty()) {
      route.push_back(resource(fmt::format("GPU {} PCIe in", b), toGBps));
      return route;
    }
    std::size_t common = 0;
    while (common < up.size() && common < down.size() && up[common] == down[common]) ++common;
    // The last element of each path is the GPU itself (its own link is named above and below).
    for (std::size_t i = up.size() - 1; i-- > common;) {
      if (i == 0) break;  // the host bridge is not a link
      route.push_back(resource(fmt::format("PCIe {} up", up[i]), fromGBps));
    }
    if (common == 0 && from.numaNode != to.numaNode) {
      route.push_back(
          resource(fmt::format("CPU socket link NUMA {} -> {}", from.numaNode, to.numaNode), model_.socketLinkGBps));
    }
    for (std::size_t i = std::max<std::size_t>(common, 1); i + 1 < down.size(); ++i) {
      route.push_back(resource(fmt::format("PCIe {} down", down[i]), toGBps));
    }
    route.push_back(resource(fmt::format("GPU {} PCIe in", b), toGBps));
    return route;
  }

  static double linkGBps(const Gpu& gpu, const GpuPair& pair) {
    const double own = pcieGBps(gpu.pcie.gen, gpu.pcie.width);
    return own > 0 ? own : pair.expectedGBps;
  }

  const Topology& topology_;
  const CostModel& model_;
  Fabric& fabric_;
  std::map<std::string, int> byName_;
};

}  // namespace

Fabric fabricFor(const Topology& topology, const std::vector<int>& gpuIndices, const CostModel& model,
                 const std::vector<std::pair<int, int>>& hostStagedPairs) {
  if (gpuIndices.empty()) throw Error(ErrorCode::InvalidInput, "no GPU to plan for");
  Fabric fabric;
  fabric.gpus = gpuIndices;
  FabricBuilder builder(topology, model, fabric);
  for (const int index : gpuIndices) {
    if (index < 0 || index >= static_cast<int>(topology.gpus.size())) {
      throw Error(ErrorCode::InvalidInput, fmt::format("GPU {} is not in the topology", index));
    }
    const Gpu& gpu = builder.gpu(index);
    fabric.memory.push_back(builder.resource(fmt::format("GPU {} memory", index), model.memoryBandwidthOf(gpu.name)));
    fabric.hostLinkGBps.push_back(pcieGBps(gpu.pcie.gen, gpu.pcie.width));
  }
  const int ranks = fabric.ranks();
  fabric.routes.resize(gpuIndices.size() * gpuIndices.size());
  fabric.hostStaged.assign(gpuIndices.size() * gpuIndices.size(), false);
  for (const auto& [a, b] : hostStagedPairs) {
    if (a < 0 || b < 0 || a >= ranks || b >= ranks) continue;  // validated by the caller (hostSettingsOf)
    fabric.hostStaged[fabric.routeIndex(a, b)] = true;
    fabric.hostStaged[fabric.routeIndex(b, a)] = true;
  }
  for (int src = 0; src < ranks; ++src) {
    for (int dst = 0; dst < ranks; ++dst) {
      const int a = gpuIndices[static_cast<std::size_t>(src)];
      const int b = gpuIndices[static_cast<std::size_t>(dst)];
      if (a == b) continue;
      const std::size_t index = fabric.routeIndex(src, dst);
      if (!topology.pair(a, b).canAccessPeer) fabric.hostStaged[index] = true;
      if (fabric.hostStaged[index]) {
        fabric.throughHost = true;
        continue;
      }
      fabric.routes[index] = builder.route(a, b);
    }
  }
  if (!fabric.throughHost) return fabric;
  // Every call goes through host memory (or partly so): each GPU's PCIe link, one resource each way.
  for (int r = 0; r < ranks; ++r) {
    const int index = gpuIndices[static_cast<std::size_t>(r)];
    const double gbps = fabric.hostLinkGBps[static_cast<std::size_t>(r)];
    if (gbps <= 0) {
      throw Error(ErrorCode::InvalidInput,
                  fmt::format("GPU {}: the topology does not say how fast its PCIe link is (its pcie gen and width), "
                              "which carries every call of GPUs without peer access through host memory",
                              index));
    }
    fabric.toHost.push_back(builder.resource(fmt::format("GPU {} PCIe to host", index), gbps));
    fabric.fromHost.push_back(builder.resource(fmt::format("GPU {} PCIe from host", index), gbps));
  }
  return fabric;
}

}  // namespace peerlink::plan
