// Path classes from PCI paths (synthetic and read from the fake sysfs trees) and for whole topologies.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "peerlink/error.hpp"
#include "peerlink/topology.hpp"
#include "topology/path_class.hpp"
#include "topology/sysfs_pci.hpp"

namespace peerlink {
namespace {

using Path = std::vector<std::string>;

// dual_socket_pcie (tests/fixtures/sysfs/README.md).
const Path kGpu0 = {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"};
const Path kGpu1 = {"pci0000:00",   "0000:00:01.0", "0000:01:00.0", "0000:02:01.0",
                    "0000:04:00.0", "0000:05:00.0", "0000:06:00.0"};
const Path kGpu2 = {"pci0000:00",   "0000:00:01.0", "0000:01:00.0", "0000:02:01.0",
                    "0000:04:00.0", "0000:05:01.0", "0000:07:00.0"};
const Path kGpu3 = {"pci0000:80", "0000:80:01.0", "0000:81:00.0"};

std::string name(std::optional<PathClass> path) {
  return path ? pathClassName(*path) : "nullopt";
}

std::string classify(const Path& a, int numaA, const Path& b, int numaB) {
  return name(classifyPciPath(a, numaA, b, numaB));
}

TEST(ClassifyPciPath, OneSwitchIsPix) {
  EXPECT_EQ(classify(kGpu1, 0, kGpu2, 0), "PIX");
  EXPECT_EQ(classify(kGpu2, 0, kGpu1, 0), "PIX");
}

TEST(ClassifyPciPath, TwoSwitchesBelowTheRootIsPxb) {
  EXPECT_EQ(classify(kGpu0, 0, kGpu1, 0), "PXB");
  EXPECT_EQ(classify(kGpu2, 0, kGpu0, 0), "PXB");
}

TEST(ClassifyPciPath, MeetingAtTheRootComplexIsPhb) {
  // Two root ports of one host bridge, a switch below each.
  const Path a = {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"};
  const Path b = {"pci0000:00", "0000:00:02.0", "0000:08:00.0", "0000:09:00.0", "0000:0a:00.0"};
  EXPECT_EQ(classify(a, 0, b, 0), "PHB");
  // GPUs directly on the root bus (VMs) or each on its own root port.
  EXPECT_EQ(classify({"pci0000:00", "0000:00:06.0"}, -1, {"pci0000:00", "0000:00:07.0"}, -1), "PHB");
  EXPECT_EQ(
      classify({"pci0000:00", "0000:00:01.0", "0000:01:00.0"}, 0, {"pci0000:00", "0000:00:03.0", "0000:02:00.0"}, 0),
      "PHB");
  // One switch under a root port, and a GPU directly on another root port.
  EXPECT_EQ(classify(kGpu0, 0, {"pci0000:00", "0000:00:03.0", "0000:10:00.0"}, 0), "PHB");
}

TEST(ClassifyPciPath, TwoHostBridgesOfOneNumaNodeIsNode) {
  EXPECT_EQ(classify(kGpu0, 0, {"pci0000:40", "0000:40:01.0", "0000:41:00.0"}, 0), "NODE");
  EXPECT_EQ(classify(kGpu3, 1, {"pci0000:c0", "0000:c0:01.0", "0000:c1:00.0"}, 1), "NODE");
}

TEST(ClassifyPciPath, AcrossNumaNodesIsSys) {
  EXPECT_EQ(classify(kGpu0, 0, kGpu3, 1), "SYS");
  EXPECT_EQ(classify(kGpu3, 1, kGpu1, 0), "SYS");
}

TEST(ClassifyPciPath, UnknownNumaAcrossHostBridgesIsSys) {
  EXPECT_EQ(classify(kGpu0, -1, {"pci0000:40", "0000:40:01.0", "0000:41:00.0"}, -1), "SYS");
  EXPECT_EQ(classify(kGpu0, 0, {"pci0000:40", "0000:40:01.0", "0000:41:00.0"}, -1), "SYS");
}

TEST(ClassifyPciPath, NumaDoesNotMatterUnderOneHostBridge) {
  EXPECT_EQ(classify(kGpu1, -1, kGpu2, -1), "PIX");
}

TEST(ClassifyPciPath, EmptyPathIsUnknown) {
  EXPECT_EQ(classify({}, 0, kGpu0, 0), "nullopt");
  EXPECT_EQ(classify(kGpu0, 0, {}, 0), "nullopt");
  EXPECT_EQ(classify({}, -1, {}, -1), "nullopt");
}

TEST(ClassifyPciPath, SameDeviceIsLoc) {
  EXPECT_EQ(classify(kGpu2, 0, kGpu2, 0), "LOC");
}

TEST(ClassifyPciPath, ThreeSwitchesDeepIsPxb) {
  // A GPU three switches below the root port, and one sharing only the top switch with it.
  const Path deep = {"pci0000:00",   "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0",
                     "0000:04:00.0", "0000:05:00.0", "0000:06:00.0", "0000:07:00.0"};
  const Path sibling = {"pci0000:00",   "0000:00:01.0", "0000:01:00.0", "0000:02:00.0",
                        "0000:03:00.0", "0000:04:01.0", "0000:20:00.0"};
  const Path top = {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:03.0", "0000:30:00.0"};
  EXPECT_EQ(classify(deep, 0, sibling, 0), "PXB");
  EXPECT_EQ(classify(deep, 0, top, 0), "PXB");
  EXPECT_EQ(classify(sibling, 0, top, 0), "PXB");
}

// ---- whole fake sysfs trees -----------------------------------------------------------------------

std::vector<SysfsPciDevice> readTree(const std::string& name) {
  const std::string root = std::string(PEERLINK_FIXTURES_DIR) + "/sysfs/" + name;
  std::vector<std::string> busIds;
  for (const auto& entry : std::filesystem::directory_iterator(root + "/bus/pci/devices")) {
    busIds.push_back(entry.path().filename().string());
  }
  std::sort(busIds.begin(), busIds.end());
  std::vector<SysfsPciDevice> gpus;
  for (const std::string& busId : busIds) gpus.push_back(readSysfsPciDevice(root, busId));
  return gpus;
}

// Rows of path class names, "X" on the diagonal.
std::vector<std::string> matrix(const std::vector<SysfsPciDevice>& gpus) {
  std::vector<std::string> rows;
  for (const SysfsPciDevice& a : gpus) {
    std::string row;
    for (const SysfsPciDevice& b : gpus) {
      if (!row.empty()) row += " ";
      row += &a == &b ? "X" : name(classifyPciPath(a.path, a.numaNode, b.path, b.numaNode));
    }
    rows.push_back(row);
  }
  return rows;
}

TEST(FakeSysfsMatrix, DualSocketPcie) {
  const auto gpus = readTree("dual_socket_pcie");
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(gpus[0].busId, "0000:03:00.0");
  EXPECT_EQ(gpus[3].busId, "0000:81:00.0");
  const std::vector<std::string> expected = {
      "X PXB PXB SYS",
      "PXB X PIX SYS",
      "PXB PIX X SYS",
      "SYS SYS SYS X",
  };
  EXPECT_EQ(matrix(gpus), expected);
}

TEST(FakeSysfsMatrix, VmFlat) {
  const auto gpus = readTree("vm_flat");
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(gpus[0].busId, "0000:00:06.0");
  EXPECT_EQ(gpus[3].busId, "0000:00:09.0");
  for (const auto& gpu : gpus) EXPECT_EQ(gpu.problems.size(), 4u) << gpu.busId;
  const std::vector<std::string> expected = {
      "X PHB PHB PHB",
      "PHB X PHB PHB",
      "PHB PHB X PHB",
      "PHB PHB PHB X",
  };
  EXPECT_EQ(matrix(gpus), expected);
}

TEST(FakeSysfsMatrix, TwoRootsOneNode) {
  const auto gpus = readTree("two_roots_one_node");
  ASSERT_EQ(gpus.size(), 3u);
  const std::vector<std::string> expected = {
      "X NODE SYS",
      "NODE X SYS",
      "SYS SYS X",
  };
  EXPECT_EQ(matrix(gpus), expected);
}

TEST(FakeSysfsMatrix, TenGpuBox) {
  const auto gpus = readTree("ten_gpu_box");
  ASSERT_EQ(gpus.size(), 10u);
  const std::vector<std::string> expected = {
      "X PIX PIX PIX PIX PHB PHB PHB PHB PHB", "PIX X PIX PIX PIX PHB PHB PHB PHB PHB",
      "PIX PIX X PIX PIX PHB PHB PHB PHB PHB", "PIX PIX PIX X PIX PHB PHB PHB PHB PHB",
      "PIX PIX PIX PIX X PHB PHB PHB PHB PHB", "PHB PHB PHB PHB PHB X PIX PIX PIX PIX",
      "PHB PHB PHB PHB PHB PIX X PIX PIX PIX", "PHB PHB PHB PHB PHB PIX PIX X PIX PIX",
      "PHB PHB PHB PHB PHB PIX PIX PIX X PIX", "PHB PHB PHB PHB PHB PIX PIX PIX PIX X",
  };
  EXPECT_EQ(matrix(gpus), expected);
}

// ---- classifyPaths on whole topologies --------------------------------------------------------------

// n GPUs on one PCIe switch each under its own root port of pci0000:00 (PHB between any two), with
// every ordered pair present.
Topology makeTopology(int n) {
  Topology topology;
  topology.source = "test";
  for (int i = 0; i < n; ++i) {
    Gpu gpu;
    gpu.cudaOrdinal = i;
    gpu.numaNode = 0;
    gpu.pciPath = {"pci0000:00", "0000:00:0" + std::to_string(i + 1) + ".0",
                   "0000:0" + std::to_string(i + 1) + ":00.0"};
    topology.gpus.push_back(gpu);
  }
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      GpuPair pair;
      pair.src = s;
      pair.dst = d;
      pair.path = PathClass::LOC;  // overwritten by every classification
      topology.pairs.push_back(pair);
    }
  }
  return topology;
}

void setNvlinks(Topology& topology, int a, int b, int links) {
  topology.pair(a, b).nvlinks = links;
  topology.pair(b, a).nvlinks = links;
}

std::string path(const Topology& topology, int src, int dst) {
  return pathClassName(topology.pair(src, dst).path);
}

TEST(ClassifyPaths, NvlinkPairsAreNvlOthersPcie) {
  Topology topology = makeTopology(3);
  setNvlinks(topology, 0, 1, 12);
  classifyPaths(topology);
  EXPECT_EQ(path(topology, 0, 1), "NVL");
  EXPECT_EQ(path(topology, 1, 0), "NVL");
  EXPECT_EQ(path(topology, 0, 2), "PHB");
  EXPECT_EQ(path(topology, 2, 1), "PHB");
  EXPECT_TRUE(topology.notes.empty());
}

TEST(ClassifyPaths, NvlinkThroughAThirdGpuIsNvb) {
  // 0 = 1 = 2 = 3 in a line: 0-2 and 1-3 have one GPU between them, 0-3 two.
  Topology topology = makeTopology(4);
  setNvlinks(topology, 0, 1, 4);
  setNvlinks(topology, 1, 2, 4);
  setNvlinks(topology, 2, 3, 4);
  classifyPaths(topology);
  EXPECT_EQ(path(topology, 0, 1), "NVL");
  EXPECT_EQ(path(topology, 0, 2), "NVB");
  EXPECT_EQ(path(topology, 2, 0), "NVB");
  EXPECT_EQ(path(topology, 1, 3), "NVB");
  EXPECT_EQ(path(topology, 0, 3), "PHB");
  EXPECT_EQ(path(topology, 3, 0), "PHB");
}

TEST(ClassifyPaths, OneWayNvlinkToTheThirdGpuIsNotNvb) {
  Topology topology = makeTopology(3);
  topology.pair(0, 1).nvlinks = 2;  // 0 -> 1 only
  topology.pair(2, 1).nvlinks = 2;  // 2 -> 1 only: no 1 -> 2 hop
  classifyPaths(topology);
  EXPECT_EQ(path(topology, 0, 1), "NVL");
  EXPECT_EQ(path(topology, 1, 0), "PHB");
  EXPECT_EQ(path(topology, 0, 2), "PHB");
}

TEST(ClassifyPaths, UnknownPciPathIsSysWithOneNote) {
  Topology topology = makeTopology(4);
  topology.gpus[2].pciPath.clear();
  topology.gpus[3].pciPath.clear();
  setNvlinks(topology, 2, 3, 8);
  classifyPaths(topology);
  EXPECT_EQ(path(topology, 0, 1), "PHB");
  EXPECT_EQ(path(topology, 0, 2), "SYS");
  EXPECT_EQ(path(topology, 3, 1), "SYS");
  EXPECT_EQ(path(topology, 2, 3), "NVL");
  ASSERT_EQ(topology.notes.size(), 1u);
  EXPECT_EQ(topology.notes[0],
            "PCIe path unknown (no sysfs PCI path) between GPUs 0-2, 0-3, 1-2, 1-3: classified as SYS, the worst "
            "case");
  classifyPaths(topology);
  EXPECT_EQ(topology.notes.size(), 1u);
}

TEST(ClassifyPaths, PciClassesFromGpuPaths) {
  Topology topology = makeTopology(4);
  topology.gpus[0].pciPath = kGpu0;
  topology.gpus[1].pciPath = kGpu1;
  topology.gpus[2].pciPath = kGpu2;
  topology.gpus[3].pciPath = kGpu3;
  topology.gpus[3].numaNode = 1;
  classifyPaths(topology);
  EXPECT_EQ(path(topology, 0, 1), "PXB");
  EXPECT_EQ(path(topology, 1, 2), "PIX");
  EXPECT_EQ(path(topology, 2, 3), "SYS");
  EXPECT_TRUE(topology.notes.empty());
}

TEST(ClassifyPaths, BadPairIndexThrows) {
  Topology topology = makeTopology(2);
  topology.pairs[0].dst = 5;
  try {
    classifyPaths(topology);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("0 -> 5"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace peerlink
