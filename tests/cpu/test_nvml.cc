// Nvml against a fake libnvidia-ml (tests/cpu/fake_nvml) and, where a driver is installed, the real one.
#include "core/nvml.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "peerlink/error.hpp"

#if !defined(PEERLINK_FAKE_NVML_PATH) || !defined(PEERLINK_FAKE_NVML_OLD_PATH)
#error "tests/CMakeLists.txt must pass the paths of the fake_nvml and fake_nvml_old libraries"
#endif

namespace peerlink {
namespace {

const std::string kFake = PEERLINK_FAKE_NVML_PATH;
const std::string kFakeOld = PEERLINK_FAKE_NVML_OLD_PATH;

/// Sets an environment variable for one test's scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

std::unique_ptr<Nvml> loadFake(const std::string& path = kFake) {
  std::string whyNot;
  std::unique_ptr<Nvml> nvml = Nvml::load(&whyNot, path);
  EXPECT_NE(nvml, nullptr) << whyNot;
  return nvml;
}

TEST(Nvml, MissingLibraryIsNotAnError) {
  const std::string path = "/nonexistent/libnvidia-ml.so.1";
  std::string whyNot;
  EXPECT_EQ(Nvml::load(&whyNot, path), nullptr);
  EXPECT_EQ(whyNot.rfind("NVML not available: ", 0), 0u) << whyNot;
  EXPECT_NE(whyNot.find(path), std::string::npos) << whyNot;
  EXPECT_NE(whyNot.find("No such file"), std::string::npos) << whyNot;
  EXPECT_EQ(whyNot.find('\n'), std::string::npos) << whyNot;
  EXPECT_EQ(Nvml::load(nullptr, path), nullptr);
}

TEST(Nvml, LibraryWithoutNvmlIsNotAnError) {
  std::string whyNot;
  EXPECT_EQ(Nvml::load(&whyNot, "libc.so.6"), nullptr);
  EXPECT_NE(whyNot.find("nvmlInit_v2"), std::string::npos) << whyNot;
}

TEST(Nvml, InitFailureNamesTheNvmlError) {
  ScopedEnv failInit("FAKE_NVML_FAIL_INIT", "1");
  std::string whyNot;
  EXPECT_EQ(Nvml::load(&whyNot, kFake), nullptr);
  EXPECT_EQ(whyNot, "NVML not available: nvmlInit_v2 failed: Driver Not Loaded (9)");
}

TEST(Nvml, DriverVersion) {
  auto nvml = loadFake();
  ASSERT_NE(nvml, nullptr);
  EXPECT_EQ(nvml->driverVersion(), "580.159.04");
  EXPECT_TRUE(nvml->problems().empty()) << nvml->problems().front();
}

TEST(Nvml, FailedCallThrowsNvmlErrorWithCallAndLine) {
  auto nvml = loadFake();
  ASSERT_NE(nvml, nullptr);
  ScopedEnv failVersion("FAKE_NVML_FAIL_DRIVER_VERSION", "1");
  try {
    nvml->driverVersion();
    FAIL() << "driverVersion() did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::NvmlError);
    EXPECT_TRUE(std::regex_match(e.what(), std::regex(R"(nvmlSystemGetDriverVersion failed: Unknown Error \(999\) )"
                                                      R"(at nvml\.cc:[0-9]+)")))
        << e.what();
  }
}

TEST(Nvml, DevicesOfATwoGpuNvlinkBox) {
  auto nvml = loadFake();
  ASSERT_NE(nvml, nullptr);
  const std::vector<NvmlDeviceInfo> devices = nvml->devices();
  ASSERT_EQ(devices.size(), 2u);

  EXPECT_EQ(devices[0].index, 0);
  EXPECT_EQ(devices[1].index, 1);
  EXPECT_EQ(devices[0].uuid, "GPU-0b4a2c6e-1f3d-4e5a-8b7c-000000000000");
  EXPECT_EQ(devices[1].uuid, "GPU-0b4a2c6e-1f3d-4e5a-8b7c-111111111111");
  EXPECT_EQ(devices[0].name, "NVIDIA H100 80GB HBM3");
  // NVML says "00000000:2A:00.0".
  EXPECT_EQ(devices[0].pciBusId, "0000:18:00.0");
  EXPECT_EQ(devices[1].pciBusId, "0000:2a:00.0");

  for (const NvmlDeviceInfo& device : devices) {
    SCOPED_TRACE("GPU " + std::to_string(device.index));
    ASSERT_EQ(device.links.size(), 4u);
    // GPU 0 from NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON, GPU 1 from the per-link NVML_FI_DEV_NVLINK_GET_SPEED.
    EXPECT_NEAR(device.linkRateGBps, 26.562, 1e-9);
    const std::string peer = device.index == 0 ? "0000:2a:00.0" : "0000:18:00.0";
    for (int l = 0; l < 2; ++l) {
      const NvmlLink& link = device.links[l];
      EXPECT_EQ(link.index, l);
      EXPECT_TRUE(link.active);
      EXPECT_TRUE(link.remoteIsGpu);
      EXPECT_FALSE(link.remoteIsSwitch);
      EXPECT_EQ(link.remoteBusId, peer);
    }
    const NvmlLink& toSwitch = device.links[2];
    EXPECT_EQ(toSwitch.index, 2);
    EXPECT_TRUE(toSwitch.active);
    EXPECT_TRUE(toSwitch.remoteIsSwitch);
    EXPECT_FALSE(toSwitch.remoteIsGpu);
    // NVML answers nvmlNvlinkVersion_t 6 for NVLink 4.0.
    EXPECT_EQ(toSwitch.version, 4);
  }
  // GPU 0's switch is a PCI device; GPU 1's answers FFFFFFFF:FF:FF.0, as Hopper's do: no bus id.
  EXPECT_EQ(devices[0].links[2].remoteBusId, "0000:c0:00.0");
  EXPECT_EQ(devices[1].links[2].remoteBusId, "");

  EXPECT_TRUE(devices[0].links[3].active);
  EXPECT_TRUE(devices[0].links[3].remoteIsSwitch);
  EXPECT_EQ(devices[0].links[1].version, 4);
  EXPECT_TRUE(devices[0].problems.empty()) << devices[0].problems.front();

  const NvmlLink& inactive = devices[1].links[3];
  EXPECT_EQ(inactive.index, 3);
  EXPECT_FALSE(inactive.active);
  EXPECT_TRUE(inactive.remoteBusId.empty());
  EXPECT_FALSE(inactive.remoteIsSwitch);
  EXPECT_FALSE(inactive.remoteIsGpu);

  // The one failing query: the version of GPU 1's link 1.
  EXPECT_EQ(devices[1].links[1].version, 0);
  ASSERT_EQ(devices[1].problems.size(), 1u);
  EXPECT_EQ(devices[1].problems[0], "nvmlDeviceGetNvLinkVersion(device 1, link 1) failed: Unknown Error (999)");
}

TEST(Nvml, ReadsMigModeAndBar1) {
  std::string whyNot;
  const auto nvml = Nvml::load(&whyNot, PEERLINK_FAKE_NVML_PATH);
  ASSERT_TRUE(nvml) << whyNot;
  const std::vector<NvmlDeviceInfo> devices = nvml->devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].migMode, -1);  // NOT_SUPPORTED: a GPU without MIG, and no problem
  EXPECT_EQ(devices[1].migMode, 1);
  EXPECT_EQ(devices[0].bar1Bytes, 64ull << 30);
  EXPECT_EQ(devices[1].bar1Bytes, 256ull << 20);
}

TEST(Nvml, OldDriverWithoutRemoteDeviceTypeInfersItFromBusIds) {
  auto nvml = loadFake(kFakeOld);
  ASSERT_NE(nvml, nullptr);
  ASSERT_EQ(nvml->problems().size(), 1u);
  EXPECT_NE(nvml->problems()[0].find("nvmlDeviceGetNvLinkRemoteDeviceType"), std::string::npos);

  const std::vector<NvmlDeviceInfo> devices = nvml->devices();
  ASSERT_EQ(devices.size(), 2u);
  for (const NvmlDeviceInfo& device : devices) {
    SCOPED_TRACE("GPU " + std::to_string(device.index));
    ASSERT_EQ(device.links.size(), 4u);
    EXPECT_TRUE(device.links[0].remoteIsGpu);
    EXPECT_TRUE(device.links[1].remoteIsGpu);
    EXPECT_TRUE(device.links[2].remoteIsSwitch);
    EXPECT_FALSE(device.links[2].remoteIsGpu);
  }
  ASSERT_FALSE(devices[0].problems.empty());
  EXPECT_NE(devices[0].problems.back().find("links 0,1,2,3"), std::string::npos) << devices[0].problems.back();
  EXPECT_NE(devices[1].problems.back().find("links 0,1,2;"), std::string::npos) << devices[1].problems.back();
}

TEST(Nvml, DestructorShutsNvmlDown) {
  // Hold the fake open ourselves so its counter survives Nvml's dlclose.
  void* fake = dlopen(kFake.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(fake, nullptr) << dlerror();
  auto initCount = reinterpret_cast<int (*)()>(dlsym(fake, "fakeNvmlInitCount"));
  ASSERT_NE(initCount, nullptr);
  ASSERT_EQ(initCount(), 0);
  {
    auto nvml = loadFake();
    ASSERT_NE(nvml, nullptr);
    EXPECT_EQ(initCount(), 1);
  }
  EXPECT_EQ(initCount(), 0);
  dlclose(fake);
}

// On a machine with a driver: the real libnvidia-ml.so.1 answers in the shapes peerlink expects.
TEST(Nvml, RealLibraryWhenPresent) {
  std::string whyNot;
  auto nvml = Nvml::load(&whyNot);
  if (!nvml) GTEST_SKIP() << whyNot;
  const std::string version = nvml->driverVersion();
  EXPECT_TRUE(std::regex_match(version, std::regex(R"([0-9]+\.[0-9]+(\.[0-9]+)?)"))) << version;
  std::cout << "driver " << version << "\n";
  for (const std::string& problem : nvml->problems()) std::cout << "  problem: " << problem << "\n";
  const std::regex busId(R"([0-9a-f]{4,8}:[0-9a-f]{2}:[0-1][0-9a-f]\.[0-7])");
  for (const NvmlDeviceInfo& device : nvml->devices()) {
    std::cout << "GPU " << device.index << " " << device.uuid << " " << device.pciBusId << " " << device.name
              << " links " << device.links.size() << " rate " << device.linkRateGBps << " GB/s\n";
    for (const NvmlLink& link : device.links) {
      std::cout << "  link " << link.index << (link.active ? " active" : " inactive") << " v" << link.version << " -> "
                << link.remoteBusId << (link.remoteIsSwitch ? " switch" : "") << (link.remoteIsGpu ? " gpu" : "")
                << "\n";
    }
    for (const std::string& problem : device.problems) std::cout << "  problem: " << problem << "\n";
    EXPECT_EQ(device.uuid.rfind("GPU-", 0), 0u) << device.uuid;
    EXPECT_TRUE(std::regex_match(device.pciBusId, busId)) << device.pciBusId;
    EXPECT_TRUE(device.problems.empty());
    bool anyActive = false;
    for (const NvmlLink& link : device.links) {
      if (!link.active) continue;
      anyActive = true;
      EXPECT_GT(link.version, 0) << "link " << link.index;
      EXPECT_TRUE(link.remoteIsGpu || link.remoteIsSwitch) << "link " << link.index;
      if (!link.remoteBusId.empty()) {
        EXPECT_TRUE(std::regex_match(link.remoteBusId, busId)) << link.remoteBusId;
      }
    }
    if (anyActive) {
      EXPECT_GT(device.linkRateGBps, 0);
    }
  }
}

}  // namespace
}  // namespace peerlink
