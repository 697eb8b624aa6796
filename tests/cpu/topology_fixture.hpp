// The topology fixtures (tests/fixtures/topologies/NAME.json) as the choice tests load them.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "peerlink/topology.hpp"

namespace peerlink::testing {

inline Topology loadTopologyFixture(const std::string& name) {
  return loadTopologyFile((std::filesystem::path(PEERLINK_FIXTURES_DIR) / "topologies" / (name + ".json")).string());
}

/// The CUDA ordinal of every GPU of `topology`, in its order.
inline std::vector<int> allDevices(const Topology& topology) {
  std::vector<int> devices;
  for (const Gpu& gpu : topology.gpus) devices.push_back(gpu.cudaOrdinal);
  return devices;
}

}  // namespace peerlink::testing
