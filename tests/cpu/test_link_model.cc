#include <gtest/gtest.h>

#include "topology/link_model.hpp"

namespace peerlink {
namespace {

Topology twoGpus() {
  Topology topology;
  topology.source = "test";
  for (int i = 0; i < 2; ++i) {
    Gpu gpu;
    gpu.cudaOrdinal = i;
    gpu.uuid = "GPU-" + std::to_string(i);
    gpu.pciBusId = "0000:0" + std::to_string(i) + ":00.0";
    topology.gpus.push_back(gpu);
  }
  for (auto [src, dst] : {std::pair{0, 1}, std::pair{1, 0}}) {
    GpuPair pair;
    pair.src = src;
    pair.dst = dst;
    pair.canAccessPeer = true;
    topology.pairs.push_back(pair);
  }
  return topology;
}

TEST(LinkModel, PcieRatesFollowTheLineCoding) {
  EXPECT_NEAR(pcieGBps(5, 16), 63.02, 0.01);  // the figure the bench compares PCIe Gen5 x16 against
  EXPECT_NEAR(pcieGBps(4, 16), 31.51, 0.01);
  EXPECT_NEAR(pcieGBps(3, 16), 15.75, 0.01);
  EXPECT_NEAR(pcieGBps(3, 8), 7.88, 0.01);
  EXPECT_NEAR(pcieGBps(2, 16), 8.0, 1e-9);
  EXPECT_NEAR(pcieGBps(1, 1), 0.25, 1e-9);
  EXPECT_GT(pcieGBps(6, 16), pcieGBps(5, 16) * 1.8);
  EXPECT_EQ(pcieGBps(0, 16), 0);
  EXPECT_EQ(pcieGBps(7, 16), 0);
  EXPECT_EQ(pcieGBps(4, 0), 0);
}

TEST(LinkModel, NvlinkRatesByGeneration) {
  EXPECT_DOUBLE_EQ(nvlinkRateForVersion(4), 26.5625);
  EXPECT_DOUBLE_EQ(nvlinkRateForVersion(3), 25.0);
  EXPECT_EQ(nvlinkRateForVersion(0), 0);
  EXPECT_EQ(nvlinkRateForVersion(9), 0);
}

TEST(LinkModel, Nv18HopperIs478GBpsPerDirection) {
  Topology topology = twoGpus();
  for (Gpu& gpu : topology.gpus) gpu.nvlink = {4, 18, 18, 0};
  topology.pair(0, 1).nvlinks = 18;
  topology.pair(0, 1).viaNvswitch = true;
  const ExpectedBandwidth expected = expectedBandwidth(topology, topology.pair(0, 1));
  EXPECT_NEAR(expected.gbps, 478.125, 1e-9);
  EXPECT_EQ(expected.basis, "18 x NVLink4 at 26.56 GB/s through NVSwitch");
}

TEST(LinkModel, MeasuredNvlinkRateWinsAndTheSlowerEndLimits) {
  Topology topology = twoGpus();
  topology.gpus[0].nvlink = {3, 4, 0, 25.0};
  topology.gpus[1].nvlink = {3, 4, 0, 20.0};
  topology.pair(0, 1).nvlinks = 4;
  EXPECT_NEAR(expectedBandwidth(topology, topology.pair(0, 1)).gbps, 80.0, 1e-9);
}

TEST(LinkModel, PcieUsesTheNarrowerLinkAndNeedsPeerAccess) {
  Topology topology = twoGpus();
  topology.gpus[0].pcie = {4, 16, 4, 16};
  topology.gpus[1].pcie = {3, 8, 4, 16};  // trained down
  ExpectedBandwidth expected = expectedBandwidth(topology, topology.pair(0, 1));
  EXPECT_NEAR(expected.gbps, pcieGBps(3, 8), 1e-9);
  EXPECT_EQ(expected.basis, "PCIe Gen3 x8");
  topology.pair(0, 1).canAccessPeer = false;
  expected = expectedBandwidth(topology, topology.pair(0, 1));
  EXPECT_EQ(expected.gbps, 0);
  EXPECT_NE(expected.basis.find("no P2P"), std::string::npos);
}

TEST(LinkModel, UnknownLinksGiveZeroWithAReason) {
  Topology topology = twoGpus();
  EXPECT_EQ(expectedBandwidth(topology, topology.pair(0, 1)).gbps, 0);
  EXPECT_EQ(expectedBandwidth(topology, topology.pair(0, 1)).basis, "PCIe link unknown");
  topology.pair(0, 1).nvlinks = 2;
  EXPECT_EQ(expectedBandwidth(topology, topology.pair(0, 1)).gbps, 0);
  EXPECT_NE(expectedBandwidth(topology, topology.pair(0, 1)).basis.find("unknown rate"), std::string::npos);
}

TEST(LinkModel, ApplyFillsEveryPair) {
  Topology topology = twoGpus();
  for (Gpu& gpu : topology.gpus) gpu.pcie = {5, 16, 5, 16};
  applyLinkModel(topology);
  for (const GpuPair& pair : topology.pairs) {
    EXPECT_NEAR(pair.expectedGBps, pcieGBps(5, 16), 1e-9);
    EXPECT_EQ(pair.bandwidthBasis, "PCIe Gen5 x16");
  }
}

}  // namespace
}  // namespace peerlink
