// The communicator's kept topology: a topology file is read again at each call. Only discovered topologies
// are kept, and discovery needs a GPU: GpuTopology.KeptTopologyIsTheDiscoveredOnePerSetting tests those.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "peerlink/params.hpp"
#include "peerlink/topology.hpp"
#include "topology/discovery_cache.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;

void writeWithHost(const fs::path& path, const Topology& topology, const std::string& host) {
  Topology changed = topology;
  changed.host = host;
  std::ofstream(path) << topologyToJson(changed);
}

TEST(DiscoveryCache, ATopologyFileIsReadAgainAtEachCall) {
  const Topology fixture = loadTopologyFile(std::string(PEERLINK_FIXTURES_DIR) + "/topologies/h200x4_vm.json");
  const fs::path path = fs::temp_directory_path() / ("peerlink-discovery-cache-" + std::to_string(getpid()) + ".json");
  Params params;
  params.set("PEERLINK_TOPO_FILE", path.string());

  writeWithHost(path, fixture, "first-host");
  EXPECT_EQ(discoveredTopology(params).host, "first-host");
  writeWithHost(path, fixture, "second-host");
  const Topology second = discoveredTopology(params);
  EXPECT_EQ(second.host, "second-host");
  EXPECT_EQ(second.gpus.size(), fixture.gpus.size());
  fs::remove(path);
}

}  // namespace
}  // namespace peerlink
