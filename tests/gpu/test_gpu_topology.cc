// Discovery on a real machine, checked against what CUDA and NVML say independently.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gpu_test_support.hpp"
#include "peerlink/params.hpp"
#include "peerlink/topology.hpp"
#include "topology/discovery_cache.hpp"

namespace peerlink {
namespace {

TEST(GpuTopology, DiscoversEveryVisibleGpuWithIdentity) {
  PEERLINK_REQUIRE_GPUS(1);
  const Topology topology = discoverTopology(Params());
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  ASSERT_EQ(topology.gpus.size(), static_cast<size_t>(count));
  std::set<std::string> uuids;
  for (const Gpu& gpu : topology.gpus) {
    EXPECT_EQ(gpu.uuid.rfind("GPU-", 0), 0u) << gpu.uuid;
    EXPECT_EQ(gpu.uuid.size(), 40u) << gpu.uuid;
    EXPECT_TRUE(uuids.insert(gpu.uuid).second);
    EXPECT_EQ(gpu.pciBusId.size(), 12u) << gpu.pciBusId;
    EXPECT_GT(gpu.smCount, 0);
    EXPECT_GT(gpu.memoryBytes, 0u);
    EXPECT_GE(gpu.ccMajor, 6);
  }
  EXPECT_GT(topology.cudaDriverVersion, 0);
  EXPECT_GT(topology.cudaRuntimeVersion, 0);
  EXPECT_NO_THROW(validateTopology(topology));
}

TEST(GpuTopology, NvmlAgreesWithCudaOnIdentity) {
  PEERLINK_REQUIRE_GPUS(1);
  const Topology topology = discoverTopology(Params());
  if (topology.nvmlGpus.empty()) GTEST_SKIP() << "NVML not available here";
  EXPECT_FALSE(topology.driverVersion.empty());
  for (const Gpu& gpu : topology.gpus) {
    ASSERT_GE(gpu.nvmlIndex, 0) << gpu.pciBusId << " not found by NVML";
    const NvmlGpu& nvml = topology.nvmlGpus.at(static_cast<size_t>(gpu.nvmlIndex));
    EXPECT_EQ(nvml.uuid, gpu.uuid);
    EXPECT_EQ(nvml.pciBusId, gpu.pciBusId);
  }
}

TEST(GpuTopology, PairsMatchTheDriversPeerAnswers) {
  PEERLINK_REQUIRE_GPUS(2);
  const Topology topology = discoverTopology(Params());
  for (const GpuPair& pair : topology.pairs) {
    int canAccess = 0;
    ASSERT_EQ(cudaDeviceCanAccessPeer(&canAccess, pair.src, pair.dst), cudaSuccess);
    EXPECT_EQ(pair.canAccessPeer, canAccess != 0);
    if (pair.nvlinks > 0) {
      EXPECT_EQ(pair.path, PathClass::NVL);
      EXPECT_GT(pair.expectedGBps, 0) << pair.bandwidthBasis;
    }
  }
}

TEST(GpuTopology, SkippingNvmlIsRecorded) {
  PEERLINK_REQUIRE_GPUS(1);
  Params params;
  params.set("PEERLINK_NVML", "0");
  const Topology topology = discoverTopology(params);
  EXPECT_TRUE(topology.nvmlGpus.empty());
  for (const Gpu& gpu : topology.gpus) EXPECT_EQ(gpu.nvmlIndex, -1);
  ASSERT_FALSE(topology.notes.empty());
  EXPECT_NE(topology.notes.front().find("PEERLINK_NVML=0"), std::string::npos);
}

TEST(GpuTopology, JsonRoundTripOfTheRealMachine) {
  PEERLINK_REQUIRE_GPUS(1);
  const Topology topology = discoverTopology(Params());
  Topology loaded = topologyFromJson(topologyToJson(topology), "round trip");
  EXPECT_EQ(loaded.source, "round trip");  // loading records where a topology came from
  loaded.source = topology.source;
  EXPECT_EQ(topologyToJson(loaded), topologyToJson(topology));
}

// What a topology says that cannot change while a process runs (a PCIe link's current speed can).
std::string identityAndPaths(const Topology& topology) {
  std::string text;
  for (const Gpu& gpu : topology.gpus) text += gpu.uuid + " " + gpu.pciBusId + "\n";
  for (const GpuPair& pair : topology.pairs) {
    text += std::to_string(pair.src) + ">" + std::to_string(pair.dst) + " " + pathClassName(pair.path) + " " +
            std::to_string(pair.nvlinks) + "\n";
  }
  return text + std::to_string(topology.nvmlGpus.size());
}

// The communicator's kept topology is what discovery finds, per setting: NVML skipped is kept apart.
TEST(GpuTopology, KeptTopologyIsTheDiscoveredOnePerSetting) {
  PEERLINK_REQUIRE_GPUS(1);
  const Topology fresh = discoverTopology(Params());
  const Topology kept = discoveredTopology(Params());
  EXPECT_EQ(identityAndPaths(kept), identityAndPaths(fresh));
  Params withoutNvml;
  withoutNvml.set("PEERLINK_NVML", "0");
  const Topology keptWithoutNvml = discoveredTopology(withoutNvml);
  EXPECT_TRUE(keptWithoutNvml.nvmlGpus.empty());
  EXPECT_EQ(identityAndPaths(keptWithoutNvml), identityAndPaths(discoverTopology(withoutNvml)));
  // Asked again, each setting gets its own: the one with NVML did not become the one without.
  EXPECT_EQ(topologyToJson(discoveredTopology(Params())), topologyToJson(kept));
  EXPECT_EQ(topologyToJson(discoveredTopology(withoutNvml)), topologyToJson(keptWithoutNvml));
}

}  // namespace
}  // namespace peerlink
