// peerlink runs the threads it starts for a GPU on that GPU's CPUs (src/core/cpu_affinity.hpp), shown on real
// GPUs: the communicator's launch threads and the bootstrap's watchdogs. The GPUs of a machine often share one
// NUMA node (on the 4xH200 VM every GPU's local CPUs are every CPU, so nothing is narrowed), so each test gives
// the GPUs CPU lists of its own: the launch threads read theirs from a topology file, the watchdogs theirs from
// a fake sysfs tree. A thread is recognised by a mask of exactly one chosen CPU, which nothing else here has.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "core/cpu_affinity.hpp"
#include "gpu_test_support.hpp"
#include "peerlink/bootstrap.hpp"
#include "peerlink/communicator.hpp"
#include "peerlink/params.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;

// How many of this process's threads may run on exactly `cpus` (Cpus_allowed_list of /proc/self/task/*/status).
int threadsOn(const std::string& cpus) {
  int count = 0;
  for (const auto& task : fs::directory_iterator("/proc/self/task")) {
    std::ifstream status(task.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("Cpus_allowed_list:", 0) != 0) continue;
      const std::size_t value = line.find_first_not_of(" \t", line.find(':') + 1);
      count += value != std::string::npos && line.substr(value) == cpus;
    }
  }
  return count;
}

// Two single CPUs this test may bind to, or the reason it cannot: the process must be unrestricted (peerlink
// leaves restricted threads alone) and have four CPUs at least (launch threads need more cores than ranks).
std::string twoCpus(std::string& first, std::string& second) {
  const CpuSet allowed = currentThreadCpus();
  const std::optional<CpuSet> online = onlineCpus();
  if (!online || !online->isSubsetOf(allowed)) {
    return fmt::format("this thread is restricted to CPUs {} (taskset, a cgroup): peerlink leaves such threads alone",
                       allowed.toList());
  }
  if (allowed.size() < 4) return fmt::format("needs 4 CPUs, this process may use {}", allowed.toList());
  first = std::to_string(allowed.cpus()[allowed.size() - 1]);
  second = std::to_string(allowed.cpus()[allowed.size() - 2]);
  return {};
}

class TempFolder {
 public:
  TempFolder() : path_(fs::temp_directory_path() / fmt::format("peerlink-gpu-affinity-{}", ::getpid())) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// This machine's topology with `cpus` as the local CPUs of the GPUs named, saved as a topology file.
std::string topologyFileWith(const fs::path& folder, const std::map<int, std::string>& cpus) {
  Topology topology = discoverTopology(Params::fromEnvironment());
  for (const auto& [gpu, list] : cpus) topology.gpus.at(static_cast<std::size_t>(gpu)).cpuAffinity = list;
  const fs::path file = folder / "topology.json";
  std::ofstream(file) << topologyToJson(topology);
  return file.string();
}

TEST(GpuAffinity, LaunchThreadsRunOnTheirGpusCpus) {
  PEERLINK_REQUIRE_GPUS(2);
  std::string cpu;
  std::string unused;
  const std::string why = twoCpus(cpu, unused);
  if (!why.empty()) GTEST_SKIP() << why;
  const TempFolder folder;
  Params params = Params::fromEnvironment();
  params.set("PEERLINK_TOPO_FILE", topologyFileWith(folder.path(), {{1, cpu}}));
  params.set("PEERLINK_COLL_LAUNCH_THREADS", "100000");
  ASSERT_EQ(threadsOn(cpu), 0);
  {
    Communicator comm({0, 1}, params);
    // The launch thread of rank 1 (threads it started would inherit its mask, hence at least).
    EXPECT_GE(threadsOn(cpu), 1) << "the launch thread of rank 1 (GPU 1) on CPU " << cpu;
    EXPECT_EQ(currentThreadCpus(), *onlineCpus()) << "the caller's thread is the application's";
  }
  EXPECT_EQ(threadsOn(cpu), 0) << "the launch threads end with the communicator";

  params.set("PEERLINK_CPU_AFFINITY", "off");
  Communicator off({0, 1}, params);
  EXPECT_EQ(threadsOn(cpu), 0) << "PEERLINK_CPU_AFFINITY=off";
}

TEST(GpuAffinity, BootstrapWatchdogsRunOnTheirRanksGpusCpus) {
  PEERLINK_REQUIRE_GPUS(2);
  std::string cpu0;
  std::string cpu1;
  const std::string why = twoCpus(cpu0, cpu1);
  if (!why.empty()) GTEST_SKIP() << why;
  const TempFolder folder;
  Params params = Params::fromEnvironment();
  // The communicator plans with the real topology; the fake sysfs only tells the watchdogs their GPUs' CPUs.
  params.set("PEERLINK_TOPO_FILE", topologyFileWith(folder.path(), {}));
  const Topology topology = loadTopologyFile(params.getString("PEERLINK_TOPO_FILE"));
  const fs::path sysfs = folder.path() / "sys";
  fs::create_directories(sysfs / "devices/system/cpu");
  std::ofstream(sysfs / "devices/system/cpu/online") << onlineCpus()->toList() << "\n";
  fs::create_directories(sysfs / "bus/pci/devices");
  for (int gpu = 0; gpu < 2; ++gpu) {
    const std::string& bus = topology.gpus[static_cast<std::size_t>(gpu)].pciBusId;
    const fs::path device = sysfs / "devices/pci0000:00" / bus;
    fs::create_directories(device);
    std::ofstream(device / "local_cpulist") << (gpu == 0 ? cpu0 : cpu1) << "\n";
    fs::create_symlink(device, sysfs / "bus/pci/devices" / bus);
  }
  params.set("PEERLINK_SYSFS_ROOT", sysfs.string());
  params.set("PEERLINK_COLL_LAUNCH_THREADS", "0");
  ASSERT_EQ(threadsOn(cpu0) + threadsOn(cpu1), 0);
  const UniqueId id = makeUniqueId(params);
  {
    Communicator comm(id, 2, {0, 1}, {0, 1}, params);
    EXPECT_EQ(threadsOn(cpu0), 1) << "the watchdog of rank 0 (GPU 0) on CPU " << cpu0;
    EXPECT_EQ(threadsOn(cpu1), 1) << "the watchdog of rank 1 (GPU 1) on CPU " << cpu1;
  }
  EXPECT_EQ(threadsOn(cpu0) + threadsOn(cpu1), 0) << "the watchdogs end with the communicator";
}

}  // namespace
}  // namespace peerlink
