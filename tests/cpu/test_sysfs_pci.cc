// Reading PCI devices from the fake sysfs trees in tests/fixtures/sysfs.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "peerlink/error.hpp"
#include "topology/sysfs_pci.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;

std::string tree(const std::string& name) {
  return std::string(PEERLINK_FIXTURES_DIR) + "/sysfs/" + name;
}

using Path = std::vector<std::string>;

TEST(NormalizePciBusId, AcceptsCudaNvmlAndShortForms) {
  EXPECT_EQ(normalizePciBusId("0000:00:06.0"), "0000:00:06.0");
  EXPECT_EQ(normalizePciBusId("00000000:00:06.0"), "0000:00:06.0");
  EXPECT_EQ(normalizePciBusId("00:06.0"), "0000:00:06.0");
  EXPECT_EQ(normalizePciBusId("0000:3b:1f.7"), "0000:3b:1f.7");
}

TEST(NormalizePciBusId, LowersUpperCase) {
  EXPECT_EQ(normalizePciBusId("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(normalizePciBusId("00000000:AF:1E.0"), "0000:af:1e.0");
  EXPECT_EQ(normalizePciBusId("C1:00.1"), "0000:c1:00.1");
}

TEST(NormalizePciBusId, KeepsWideDomains) {
  EXPECT_EQ(normalizePciBusId("00010000:E1:00.0"), "10000:e1:00.0");
  EXPECT_EQ(normalizePciBusId("10000:e1:00.0"), "10000:e1:00.0");
}

TEST(NormalizePciBusId, RejectsGarbage) {
  for (const char* bad : {"", "garbage", "0000:00:06", "0000:00:06.", "0000:00:06.8", "0000:00:20.0", "0000:100:00.0",
                          "000000000:00:06.0", ":00:06.0", "0000::06.0", "0000:00:06.0 ", " 0000:00:06.0",
                          "0000:0g:06.0", "0:0:0:06.0", "0000:00:06.0.1", "GPU-1234"}) {
    try {
      normalizePciBusId(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidInput) << bad;
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(PcieGenFromSpeed, EveryGenerationInBothKernelFormats) {
  EXPECT_EQ(pcieGenFromSpeed("2.5 GT/s PCIe"), 1);
  EXPECT_EQ(pcieGenFromSpeed("2.5 GT/s"), 1);
  EXPECT_EQ(pcieGenFromSpeed("5.0 GT/s PCIe"), 2);
  EXPECT_EQ(pcieGenFromSpeed("5 GT/s"), 2);
  EXPECT_EQ(pcieGenFromSpeed("8.0 GT/s PCIe"), 3);
  EXPECT_EQ(pcieGenFromSpeed("8.0 GT/s"), 3);
  EXPECT_EQ(pcieGenFromSpeed("8 GT/s"), 3);
  EXPECT_EQ(pcieGenFromSpeed("16.0 GT/s PCIe"), 4);
  EXPECT_EQ(pcieGenFromSpeed("16 GT/s"), 4);
  EXPECT_EQ(pcieGenFromSpeed("32.0 GT/s PCIe"), 5);
  EXPECT_EQ(pcieGenFromSpeed("32.0 GT/s"), 5);
  EXPECT_EQ(pcieGenFromSpeed("64.0 GT/s PCIe"), 6);
  EXPECT_EQ(pcieGenFromSpeed("64.0 GT/s\n"), 6);
}

TEST(PcieGenFromSpeed, UnknownIsZero) {
  for (const char* speed : {"Unknown", "Unknown speed", "", "GT/s", "16.0", "16.0 MT/s", "12.0 GT/s", "2.0 GT/s",
                            "16.5 GT/s", "-16.0 GT/s", "16. GT/s"}) {
    EXPECT_EQ(pcieGenFromSpeed(speed), 0) << "'" << speed << "'";
  }
}

TEST(ReadSysfsPciDevice, DualSocketPaths) {
  const std::string root = tree("dual_socket_pcie");
  const SysfsPciDevice gpu0 = readSysfsPciDevice(root, "0000:03:00.0");
  EXPECT_TRUE(gpu0.found);
  EXPECT_EQ(gpu0.busId, "0000:03:00.0");
  EXPECT_EQ(gpu0.path, (Path{"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"}));
  EXPECT_EQ(gpu0.numaNode, 0);
  EXPECT_EQ(gpu0.cpuList, "0-31");
  EXPECT_TRUE(gpu0.problems.empty()) << gpu0.problems.front();

  const SysfsPciDevice gpu2 = readSysfsPciDevice(root, "00000000:07:00.0");
  EXPECT_EQ(gpu2.busId, "0000:07:00.0");
  EXPECT_EQ(gpu2.path, (Path{"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:01.0", "0000:04:00.0",
                             "0000:05:01.0", "0000:07:00.0"}));

  const SysfsPciDevice gpu3 = readSysfsPciDevice(root, "81:00.0");
  EXPECT_TRUE(gpu3.found);
  EXPECT_EQ(gpu3.path, (Path{"pci0000:80", "0000:80:01.0", "0000:81:00.0"}));
  EXPECT_EQ(gpu3.numaNode, 1);
  EXPECT_EQ(gpu3.cpuList, "32-63");
  EXPECT_TRUE(gpu3.problems.empty());
}

TEST(ReadSysfsPciDevice, DualSocketLinksAreGen4x16) {
  for (const char* busId : {"0000:03:00.0", "0000:06:00.0", "0000:07:00.0", "0000:81:00.0"}) {
    const SysfsPciDevice gpu = readSysfsPciDevice(tree("dual_socket_pcie"), busId);
    EXPECT_EQ(gpu.link.gen, 4) << busId;
    EXPECT_EQ(gpu.link.width, 16) << busId;
    EXPECT_EQ(gpu.link.maxGen, 4) << busId;
    EXPECT_EQ(gpu.link.maxWidth, 16) << busId;
  }
}

TEST(ReadSysfsPciDevice, VmWithoutNumaOrLinkFiles) {
  const SysfsPciDevice gpu = readSysfsPciDevice(tree("vm_flat"), "0000:00:07.0");
  EXPECT_TRUE(gpu.found);
  EXPECT_EQ(gpu.path, (Path{"pci0000:00", "0000:00:07.0"}));
  EXPECT_EQ(gpu.numaNode, -1);
  EXPECT_EQ(gpu.cpuList, "0-15");
  EXPECT_EQ(gpu.link.gen, 0);
  EXPECT_EQ(gpu.link.width, 0);
  EXPECT_EQ(gpu.link.maxGen, 0);
  EXPECT_EQ(gpu.link.maxWidth, 0);
  ASSERT_EQ(gpu.problems.size(), 4u);
  const char* missing[] = {"current_link_speed", "current_link_width", "max_link_speed", "max_link_width"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NE(gpu.problems[i].find(missing[i]), std::string::npos) << gpu.problems[i];
    EXPECT_NE(gpu.problems[i].find("0000:00:07.0"), std::string::npos) << gpu.problems[i];
  }
}

TEST(ReadSysfsPciDevice, LinkTrainedDown) {
  const SysfsPciDevice gpu = readSysfsPciDevice(tree("two_roots_one_node"), "0000:41:00.0");
  EXPECT_EQ(gpu.path, (Path{"pci0000:40", "0000:40:01.0", "0000:41:00.0"}));
  EXPECT_EQ(gpu.numaNode, 0);
  EXPECT_EQ(gpu.cpuList, "0-23,48-71");
  EXPECT_EQ(gpu.link.gen, 3);
  EXPECT_EQ(gpu.link.width, 8);
  EXPECT_EQ(gpu.link.maxGen, 5);
  EXPECT_EQ(gpu.link.maxWidth, 16);
  EXPECT_TRUE(gpu.problems.empty());

  const SysfsPciDevice other = readSysfsPciDevice(tree("two_roots_one_node"), "0000:81:00.0");
  EXPECT_EQ(other.numaNode, 1);
  EXPECT_EQ(other.cpuList, "24-47,72-95");
  EXPECT_EQ(other.link.gen, 5);
}

TEST(ReadSysfsPciDevice, TenGpuBoxOldKernelSpeedFormat) {
  const SysfsPciDevice gpu = readSysfsPciDevice(tree("ten_gpu_box"), "0000:0E:00.0");
  EXPECT_EQ(gpu.busId, "0000:0e:00.0");
  EXPECT_EQ(gpu.path, (Path{"pci0000:00", "0000:00:02.0", "0000:08:00.0", "0000:09:04.0", "0000:0e:00.0"}));
  EXPECT_EQ(gpu.link.gen, 3);
  EXPECT_EQ(gpu.link.width, 16);
  EXPECT_EQ(gpu.link.maxGen, 3);
  EXPECT_TRUE(gpu.problems.empty());
}

TEST(ReadSysfsPciDevice, MissingDeviceIsNotFound) {
  const SysfsPciDevice gpu = readSysfsPciDevice(tree("dual_socket_pcie"), "0000:42:00.0");
  EXPECT_FALSE(gpu.found);
  EXPECT_EQ(gpu.busId, "0000:42:00.0");
  EXPECT_TRUE(gpu.path.empty());
  EXPECT_EQ(gpu.numaNode, -1);
  EXPECT_TRUE(gpu.cpuList.empty());
  EXPECT_EQ(gpu.link.gen, 0);
  ASSERT_EQ(gpu.problems.size(), 1u);
  EXPECT_NE(gpu.problems[0].find("0000:42:00.0 does not exist"), std::string::npos) << gpu.problems[0];
}

TEST(ReadSysfsPciDevice, MissingRootIsNotFound) {
  const SysfsPciDevice gpu = readSysfsPciDevice(tree("no_such_tree"), "0000:03:00.0");
  EXPECT_FALSE(gpu.found);
  EXPECT_EQ(gpu.problems.size(), 1u);
}

TEST(ReadSysfsPciDevice, GarbageBusIdThrows) {
  EXPECT_THROW(readSysfsPciDevice(tree("dual_socket_pcie"), "../../etc"), Error);
}

// Trees that cannot be committed as fixtures (dangling links, malformed attributes) are built in a
// temporary directory.
class ScratchTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("peerlink_sysfs_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "bus" / "pci" / "devices");
    fs::create_directories(root_ / "devices");
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path addDevice(const Path& chain) {
    fs::path dir = root_ / "devices";
    fs::path target = fs::path("..") / ".." / ".." / "devices";
    for (const std::string& part : chain) {
      dir /= part;
      target /= part;
    }
    fs::create_directories(dir);
    fs::create_directory_symlink(target, root_ / "bus" / "pci" / "devices" / chain.back());
    return dir;
  }
  static void write(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }

  fs::path root_;
};

TEST_F(ScratchTree, DanglingLinkIsNotFound) {
  fs::create_directory_symlink("../../../devices/pci0000:00/0000:00:05.0",
                               root_ / "bus" / "pci" / "devices" / "0000:00:05.0");
  const SysfsPciDevice gpu = readSysfsPciDevice(root_.string(), "0000:00:05.0");
  EXPECT_FALSE(gpu.found);
  ASSERT_EQ(gpu.problems.size(), 1u);
  EXPECT_NE(gpu.problems[0].find("cannot resolve"), std::string::npos) << gpu.problems[0];
}

TEST_F(ScratchTree, MalformedAttributesAreProblems) {
  const fs::path dir = addDevice({"pci0000:00", "0000:00:05.0"});
  write(dir / "numa_node", "zero\n");
  write(dir / "local_cpulist", "0-7\n");
  write(dir / "current_link_speed", "Unknown\n");
  write(dir / "current_link_width", "wide\n");
  write(dir / "max_link_speed", "16.0 GT/s PCIe\n");
  write(dir / "max_link_width", "x16\n");
  const SysfsPciDevice gpu = readSysfsPciDevice(root_.string(), "0000:00:05.0");
  EXPECT_TRUE(gpu.found);
  EXPECT_EQ(gpu.numaNode, -1);
  EXPECT_EQ(gpu.cpuList, "0-7");
  EXPECT_EQ(gpu.link.gen, 0);
  EXPECT_EQ(gpu.link.width, 0);
  EXPECT_EQ(gpu.link.maxGen, 4);
  EXPECT_EQ(gpu.link.maxWidth, 16);
  ASSERT_EQ(gpu.problems.size(), 3u);
  EXPECT_NE(gpu.problems[0].find("numa_node is 'zero'"), std::string::npos) << gpu.problems[0];
  EXPECT_NE(gpu.problems[1].find("current_link_speed is 'Unknown'"), std::string::npos) << gpu.problems[1];
  EXPECT_NE(gpu.problems[2].find("current_link_width is 'wide'"), std::string::npos) << gpu.problems[2];
}

TEST_F(ScratchTree, HostBridgeBelowVirtualBusDirectories) {
  // Hyper-V guests: /sys/devices/LNXSYSTM:00/.../VMBUS:00/<guid>/pci7c4b:00/7c4b:00:00.0
  addDevice({"LNXSYSTM:00", "VMBUS:00", "47505500-0001-0000-3130-444531303244", "pci7c4b:00", "7c4b:00:00.0"});
  const SysfsPciDevice gpu = readSysfsPciDevice(root_.string(), "00007C4B:00:00.0");
  EXPECT_TRUE(gpu.found);
  EXPECT_EQ(gpu.path, (Path{"pci7c4b:00", "7c4b:00:00.0"}));
}

TEST_F(ScratchTree, NoHostBridgeLeavesPathEmpty) {
  addDevice({"platform", "0000:00:05.0"});
  const SysfsPciDevice gpu = readSysfsPciDevice(root_.string(), "0000:00:05.0");
  EXPECT_TRUE(gpu.found);
  EXPECT_TRUE(gpu.path.empty());
  ASSERT_FALSE(gpu.problems.empty());
  EXPECT_NE(gpu.problems[0].find("no PCI host bridge"), std::string::npos) << gpu.problems[0];
}

}  // namespace
}  // namespace peerlink
