// The topology fixtures say what the machines they stand for really are, and the user-facing examples are
// copies of them (tests/fixtures/topologies/generate.py writes both).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "peerlink/topology.hpp"
#include "topology/link_model.hpp"
#include "topology/path_class.hpp"

namespace peerlink {

// GoogleTest prints PathClass values by name in failures.
void PrintTo(PathClass path, std::ostream* out) {
  *out << pathClassName(path);
}

namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(PEERLINK_FIXTURES_DIR) / "topologies";
const fs::path kExamples = fs::path(PEERLINK_EXAMPLES_DIR) / "topologies";

Topology load(const std::string& name) {
  return loadTopologyFile((kFixtures / (name + ".json")).string());
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

constexpr double kGen4x16 = 16.0 * 16 * 128 / 130 / 8;  // 31.51 GB/s
constexpr const char* kAll[] = {"h100x8_nvswitch",      "h200x4_vm",  "dual_socket_pcie",      "rtx4090x2",
                                "vm_flat_numa_unknown", "pcie_10gpu", "a6000x8_nvlink_bridges"};

TEST(Fixtures, EveryFixtureIsSelfConsistent) {
  for (const char* name : kAll) {
    SCOPED_TRACE(name);
    const Topology t = load(name);
    ASSERT_EQ(t.nvmlGpus.size(), t.gpus.size());
    for (size_t i = 0; i < t.gpus.size(); ++i) {
      EXPECT_EQ(t.nvmlGpus[i].uuid, t.gpus[i].uuid);
      EXPECT_EQ(t.nvmlGpus[i].pciBusId, t.gpus[i].pciBusId);
      if (!t.gpus[i].pciPath.empty()) {
        EXPECT_EQ(t.gpus[i].pciPath.back(), t.gpus[i].pciBusId);
      }
    }
    for (const GpuPair& p : t.pairs) {
      const GpuPair& back = t.pair(p.dst, p.src);
      EXPECT_EQ(p.path, back.path);
      EXPECT_EQ(p.canAccessPeer, back.canAccessPeer);
      EXPECT_EQ(p.canAccessPeer, p.p2p.accessSupported);
      EXPECT_EQ(p.nvlinks, back.nvlinks);
      EXPECT_EQ(p.expectedGBps, back.expectedGBps);
      EXPECT_FALSE(p.bandwidthBasis.empty());
    }
    EXPECT_FALSE(t.cudaVisibleDevices.has_value());
  }
}

// A fixture's paths and expected bandwidths are what discovery derives from its GPUs' PCI paths, NUMA
// nodes, NVLinks and P2P flags.
TEST(Fixtures, PathsAndBandwidthsAgreeWithTheModels) {
  for (const char* name : kAll) {
    SCOPED_TRACE(name);
    const Topology fixture = load(name);
    Topology derived = fixture;
    for (GpuPair& p : derived.pairs) {
      p.path = PathClass::LOC;
      p.expectedGBps = -1;
      p.bandwidthBasis.clear();
    }
    classifyPaths(derived);
    applyLinkModel(derived);
    for (size_t i = 0; i < fixture.pairs.size(); ++i) {
      const GpuPair& f = fixture.pairs[i];
      const GpuPair& d = derived.pairs[i];
      SCOPED_TRACE(std::to_string(f.src) + " -> " + std::to_string(f.dst));
      EXPECT_EQ(d.path, f.path);
      EXPECT_NEAR(d.expectedGBps, f.expectedGBps, 1e-9);
      EXPECT_EQ(d.bandwidthBasis, f.bandwidthBasis);
    }
  }
}

void expectNv18Everywhere(const Topology& t) {
  for (const Gpu& gpu : t.gpus) {
    EXPECT_EQ(gpu.nvlink.version, 4);
    EXPECT_EQ(gpu.nvlink.activeLinks, 18);
    EXPECT_EQ(gpu.nvlink.switchLinks, 18);
    EXPECT_DOUBLE_EQ(gpu.nvlink.linkRateGBps, 26.5625);
    EXPECT_EQ(gpu.ccMajor, 9);
    EXPECT_EQ(gpu.ccMinor, 0);
    EXPECT_EQ(gpu.smCount, 132);
    EXPECT_EQ(gpu.pcie.gen, 5);
    EXPECT_EQ(gpu.pcie.width, 16);
  }
  for (const GpuPair& p : t.pairs) {
    EXPECT_EQ(p.path, PathClass::NVL);
    EXPECT_EQ(p.nvlinks, 18);
    EXPECT_TRUE(p.viaNvswitch);
    EXPECT_TRUE(p.canAccessPeer);
    EXPECT_TRUE(p.p2p.nativeAtomics);
    EXPECT_TRUE(p.p2p.cudaArrayAccess);
    EXPECT_EQ(p.p2p.performanceRank, 0);
    EXPECT_DOUBLE_EQ(p.expectedGBps, 478.125);
  }
}

TEST(Fixtures, H100x8NvSwitch) {
  const Topology t = load("h100x8_nvswitch");
  ASSERT_EQ(t.gpus.size(), 8u);
  EXPECT_EQ(t.pairs.size(), 56u);
  expectNv18Everywhere(t);
  const std::vector<std::string> busIds = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                                           "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
  for (size_t i = 0; i < 8; ++i) {
    const Gpu& gpu = t.gpus[i];
    EXPECT_EQ(gpu.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu.memoryBytes, 85520809984u);
    EXPECT_EQ(gpu.pciBusId, busIds[i]);
    EXPECT_EQ(gpu.pciPath.size(), 5u) << "root port and a PCIe switch above each GPU";
    EXPECT_EQ(gpu.numaNode, i < 4 ? 0 : 1);
    EXPECT_EQ(gpu.cpuAffinity, i < 4 ? "0-55,112-167" : "56-111,168-223");
  }
}

TEST(Fixtures, H200x4IsTheDeviceMachine) {
  const Topology t = load("h200x4_vm");
  ASSERT_EQ(t.gpus.size(), 4u);
  EXPECT_EQ(t.pairs.size(), 12u);
  expectNv18Everywhere(t);
  EXPECT_EQ(t.host, "vm");
  EXPECT_EQ(t.driverVersion, "580.159.04");
  EXPECT_EQ(t.cudaDriverVersion, 13000);
  EXPECT_EQ(t.cudaRuntimeVersion, 13000);
  const std::vector<std::string> uuids = {
      "GPU-5eabc8ca-c37d-4856-1bf1-06b5d1642860", "GPU-fab2912c-7605-dc53-ba6a-bf2f119ff921",
      "GPU-7d7159c7-974f-2d93-337a-33c6609a4fb6", "GPU-c109916a-970a-33d4-457b-dc109474f6ae"};
  for (size_t i = 0; i < 4; ++i) {
    const Gpu& gpu = t.gpus[i];
    const std::string bus = "0000:00:0" + std::to_string(6 + i) + ".0";
    EXPECT_EQ(gpu.uuid, uuids[i]);
    EXPECT_EQ(gpu.name, "NVIDIA H200");
    EXPECT_EQ(gpu.pciBusId, bus);
    EXPECT_EQ(gpu.pciPath, (std::vector<std::string>{"pci0000:00", bus}));
    EXPECT_EQ(gpu.memoryBytes, 150109880320u);  // cudaDeviceProp::totalGlobalMem there: 139.8 GiB
    EXPECT_EQ(gpu.numaNode, 0);                 // sysfs says -1 there; discovery uses the only NUMA node
    EXPECT_EQ(gpu.cpuAffinity, "0-63");
  }
}

TEST(Fixtures, DualSocketPcieIsExactlyTheLayout) {
  const Topology t = load("dual_socket_pcie");
  ASSERT_EQ(t.gpus.size(), 4u);
  using P = PathClass;
  const P X = P::LOC;  // the diagonal, never looked up
  const P expected[4][4] = {
      {X, P::PXB, P::PXB, P::SYS},
      {P::PXB, X, P::PIX, P::SYS},
      {P::PXB, P::PIX, X, P::SYS},
      {P::SYS, P::SYS, P::SYS, X},
  };
  for (int s = 0; s < 4; ++s) {
    for (int d = 0; d < 4; ++d) {
      if (s == d) continue;
      SCOPED_TRACE(std::to_string(s) + " -> " + std::to_string(d));
      const GpuPair& p = t.pair(s, d);
      EXPECT_EQ(p.path, expected[s][d]);
      const bool p2p = p.path != P::SYS;
      EXPECT_EQ(p.canAccessPeer, p2p);
      EXPECT_EQ(p.nvlinks, 0);
      EXPECT_NEAR(p.expectedGBps, p2p ? kGen4x16 : 0.0, 1e-9);
      if (!p2p) {
        EXPECT_EQ(p.bandwidthBasis.rfind("no P2P", 0), 0u) << p.bandwidthBasis;
      }
    }
  }
  const std::vector<std::string> paths[4] = {
      {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"},
      {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:01.0", "0000:04:00.0", "0000:05:00.0", "0000:06:00.0"},
      {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:01.0", "0000:04:00.0", "0000:05:01.0", "0000:07:00.0"},
      {"pci0000:80", "0000:80:01.0", "0000:81:00.0"},
  };
  for (size_t i = 0; i < 4; ++i) {
    const Gpu& gpu = t.gpus[i];
    EXPECT_EQ(gpu.name, "NVIDIA L40S");
    EXPECT_EQ(gpu.smCount, 142);
    EXPECT_EQ(gpu.pciPath, paths[i]);
    EXPECT_EQ(gpu.numaNode, i < 3 ? 0 : 1);
    EXPECT_EQ(gpu.cpuAffinity, i < 3 ? "0-31" : "32-63");
    EXPECT_EQ(gpu.pcie.gen, 4);
    EXPECT_EQ(gpu.pcie.width, 16);
    EXPECT_EQ(gpu.nvlink.activeLinks, 0);
  }
}

TEST(Fixtures, Rtx4090HaveNoP2p) {
  const Topology t = load("rtx4090x2");
  ASSERT_EQ(t.gpus.size(), 2u);
  for (const GpuPair& p : t.pairs) {
    EXPECT_FALSE(p.canAccessPeer);
    EXPECT_FALSE(p.p2p.accessSupported);
    EXPECT_EQ(p.path, PathClass::PHB);
    EXPECT_EQ(p.nvlinks, 0);
    EXPECT_EQ(p.expectedGBps, 0.0);
    EXPECT_EQ(p.bandwidthBasis.rfind("no P2P", 0), 0u) << p.bandwidthBasis;
  }
  for (const Gpu& gpu : t.gpus) {
    EXPECT_EQ(gpu.name, "NVIDIA GeForce RTX 4090");
    EXPECT_EQ(gpu.smCount, 128);
    EXPECT_EQ(gpu.nvlink.activeLinks, 0);
    EXPECT_EQ(gpu.pciPath.front(), "pci0000:00");
  }
}

TEST(Fixtures, VmKnowsNoNumaNoLinks) {
  const Topology t = load("vm_flat_numa_unknown");
  ASSERT_EQ(t.gpus.size(), 4u);
  for (const Gpu& gpu : t.gpus) {
    EXPECT_EQ(gpu.name, "NVIDIA A100-SXM4-80GB");
    EXPECT_EQ(gpu.numaNode, -1);
    EXPECT_EQ(gpu.cpuAffinity, "");
    EXPECT_EQ(gpu.pcie.gen, 0);
    EXPECT_EQ(gpu.pcie.width, 0);
    EXPECT_EQ(gpu.nvlink.activeLinks, 0);
    EXPECT_EQ(gpu.pciPath.size(), 2u);
  }
  for (const GpuPair& p : t.pairs) {
    EXPECT_TRUE(p.canAccessPeer);
    EXPECT_EQ(p.path, PathClass::PHB);
    EXPECT_EQ(p.expectedGBps, 0.0);
    EXPECT_EQ(p.bandwidthBasis, "PCIe link unknown");
  }
  EXPECT_FALSE(t.notes.empty());
}

TEST(Fixtures, TenGpusEachWithNinePeers) {
  const Topology t = load("pcie_10gpu");
  ASSERT_EQ(t.gpus.size(), 10u);
  EXPECT_EQ(t.pairs.size(), 90u);
  for (int s = 0; s < 10; ++s) {
    int peers = 0;
    for (int d = 0; d < 10; ++d) {
      if (s == d) continue;
      const GpuPair& p = t.pair(s, d);
      peers += p.canAccessPeer ? 1 : 0;
      EXPECT_EQ(p.path, s / 5 == d / 5 ? PathClass::PIX : PathClass::PHB) << s << " -> " << d;
      EXPECT_NEAR(p.expectedGBps, kGen4x16, 1e-9);
    }
    EXPECT_EQ(peers, 9) << "GPU " << s;
    EXPECT_EQ(t.gpus[static_cast<size_t>(s)].name, "NVIDIA RTX A6000");
    EXPECT_EQ(t.gpus[static_cast<size_t>(s)].numaNode, 0);
  }
}

TEST(Fixtures, A6000x8HasNvlinkBridgesBetweenPairsOnDifferentSwitches) {
  const Topology t = load("a6000x8_nvlink_bridges");
  ASSERT_EQ(t.gpus.size(), 8u);
  const std::set<std::pair<int, int>> bridges = {{0, 2}, {1, 3}, {4, 6}, {5, 7}};
  for (const GpuPair& p : t.pairs) {
    SCOPED_TRACE(std::to_string(p.src) + " -> " + std::to_string(p.dst));
    const bool bridged = bridges.count({std::min(p.src, p.dst), std::max(p.src, p.dst)}) == 1;
    const bool sameSocket = p.src / 4 == p.dst / 4;
    EXPECT_EQ(p.nvlinks, bridged ? 4 : 0);
    EXPECT_FALSE(p.viaNvswitch);
    EXPECT_EQ(p.canAccessPeer, sameSocket);
    if (bridged) {
      EXPECT_EQ(p.path, PathClass::NVL);
      EXPECT_DOUBLE_EQ(p.expectedGBps, 56.25);
    } else if (!sameSocket) {
      EXPECT_EQ(p.path, PathClass::SYS);
    } else {
      EXPECT_EQ(p.path, p.src / 2 == p.dst / 2 ? PathClass::PIX : PathClass::PHB);
      EXPECT_NEAR(p.expectedGBps, kGen4x16, 1e-9);
    }
  }
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(t.gpus[i].numaNode, i < 4 ? 0 : 1);
    EXPECT_EQ(t.gpus[i].nvlink.activeLinks, 4);
    EXPECT_EQ(t.gpus[i].nvlink.switchLinks, 0);
  }
}

TEST(Fixtures, EveryExampleEqualsItsFixture) {
  std::set<std::string> examples;
  for (const auto& entry : fs::directory_iterator(kExamples)) {
    if (entry.path().extension() != ".json") continue;
    examples.insert(entry.path().filename().string());
    SCOPED_TRACE(entry.path().string());
    const fs::path fixture = kFixtures / entry.path().filename();
    ASSERT_TRUE(fs::exists(fixture));
    EXPECT_EQ(readFile(entry.path()), readFile(fixture));
  }
  EXPECT_EQ(examples, (std::set<std::string>{"dual_socket_pcie.json", "h100x8_nvswitch.json", "h200x4_vm.json",
                                             "rtx4090x2.json"}));
}

}  // namespace
}  // namespace peerlink
