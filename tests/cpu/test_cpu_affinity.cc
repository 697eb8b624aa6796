// CPU lists (core/cpu_set.hpp) and the decision to run a thread near its GPU (core/cpu_affinity.hpp): the pure
// decision on every case, then the system calls on real threads of this machine, and LaunchThreads binding its
// threads.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "coll/launch_threads.hpp"
#include "core/cpu_affinity.hpp"
#include "core/cpu_set.hpp"
#include "peerlink/error.hpp"
#include "peerlink/params.hpp"

namespace peerlink {
namespace {

CpuSet cpus(const std::string& list) {
  const std::optional<CpuSet> set = CpuSet::parse(list);
  EXPECT_TRUE(set.has_value()) << list;
  return set.value_or(CpuSet());
}

TEST(CpuSet, ParsesTheKernelsListsAndWritesThemBack) {
  EXPECT_EQ(cpus("0-3,8,10-11").cpus(), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(cpus("0-23,48-71\n").toList(), "0-23,48-71");
  EXPECT_EQ(cpus(" 5 , 1-2 ").toList(), "1-2,5");
  EXPECT_EQ(cpus("3,1,2,2").toList(), "1-3");
  EXPECT_TRUE(cpus("").empty());
  EXPECT_EQ(CpuSet({4, -1, 4, 2}).toList(), "2,4");
  for (const char* bad : {"0-", "-3", "3-1", "a", "1,,2", "1,", "0-99999", "1 2", "0x1"}) {
    EXPECT_FALSE(CpuSet::parse(bad).has_value()) << bad;
  }
}

TEST(CpuSet, SetOperations) {
  const CpuSet a = cpus("0-7");
  const CpuSet b = cpus("4-11");
  EXPECT_EQ(a.intersect(b).toList(), "4-7");
  EXPECT_TRUE(cpus("2-3").isSubsetOf(a));
  EXPECT_FALSE(b.isSubsetOf(a));
  EXPECT_TRUE(CpuSet().isSubsetOf(a));
  EXPECT_TRUE(a.contains(7));
  EXPECT_FALSE(a.contains(8));
}

TEST(ThreadAffinity, NarrowsAFullMaskToTheGpusNode) {
  const CpuSet online = cpus("0-63");
  const AffinityDecision decision = decideThreadAffinity(AffinityMode::Auto, "0-15,32-47", online, online);
  ASSERT_TRUE(decision.bindTo.has_value());
  EXPECT_EQ(decision.bindTo->toList(), "0-15,32-47");
  EXPECT_EQ(decision.reason, "bound to CPUs 0-15,32-47, the GPU's NUMA node (of the online 0-63)");
}

TEST(ThreadAffinity, OnlyTheOnlineCpusOfTheNodeAreUsed) {
  const CpuSet online = cpus("0-7,16-23");
  const AffinityDecision decision = decideThreadAffinity(AffinityMode::Auto, "0-15", online, online);
  ASSERT_TRUE(decision.bindTo.has_value());
  EXPECT_EQ(decision.bindTo->toList(), "0-7");
}

TEST(ThreadAffinity, LeavesAThreadAlone) {
  const CpuSet online = cpus("0-63");
  struct Case {
    AffinityMode mode;
    std::string gpu;
    std::string current;
    std::string online;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {AffinityMode::Off, "0-31", "0-63", "0-63", "PEERLINK_CPU_AFFINITY=off: left where it may run"},
      {AffinityMode::Auto, "", "0-63", "0-63",
       "the GPU's local CPUs are unknown (sysfs has no local_cpulist for it): left where it may run"},
      {AffinityMode::Auto, "0-x", "0-63", "0-63", "the GPU's local CPU list '0-x' is malformed: left where it may run"},
      {AffinityMode::Auto, "0-31", "0-63", "", "the online CPUs are unknown: left where it may run"},
      // taskset / numactl / a cgroup / the application narrowed it already: respected, even if elsewhere.
      {AffinityMode::Auto, "0-31", "40-47", "0-63",
       "already restricted to CPUs 40-47 of the online 0-63 (taskset, numactl, a cgroup or the application): left "
       "as is"},
      {AffinityMode::Auto, "64-95", "0-63", "0-63",
       "the GPU's local CPUs 64-95 are none of the online CPUs 0-63: left where it may run"},
      // One NUMA node (the 4xH200 VM): nothing to narrow.
      {AffinityMode::Auto, "0-63", "0-63", "0-63",
       "the GPU's local CPUs 0-63 are every online CPU (one NUMA node): nothing to narrow"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    const AffinityDecision decision =
        decideThreadAffinity(c.mode, c.gpu, cpus(c.current), c.online.empty() ? CpuSet() : cpus(c.online));
    EXPECT_FALSE(decision.bindTo.has_value());
    EXPECT_EQ(decision.reason, c.reason);
  }
}

TEST(ThreadAffinity, ModeFromTheRegistry) {
  Params params;
  EXPECT_EQ(affinityModeFrom(params), AffinityMode::Auto);
  params.set("PEERLINK_CPU_AFFINITY", "off");
  EXPECT_EQ(affinityModeFrom(params), AffinityMode::Off);
  EXPECT_THROW(params.set("PEERLINK_CPU_AFFINITY", "numa"), Error);
}

// A fake sysfs whose devices/system/cpu/online says `online`.
class FakeSysfs {
 public:
  explicit FakeSysfs(const std::string& online)
      : root_(std::filesystem::temp_directory_path() / ("peerlink-affinity-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(root_ / "devices/system/cpu");
    std::ofstream(root_ / "devices/system/cpu/online") << online << "\n";
  }
  ~FakeSysfs() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  std::string root() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

TEST(ThreadAffinity, OnlineCpusFromSysfs) {
  const FakeSysfs sysfs("0-3,8");
  EXPECT_EQ(onlineCpus(sysfs.root())->toList(), "0-3,8");
  EXPECT_FALSE(onlineCpus("/nonexistent").has_value());
  const std::optional<CpuSet> real = onlineCpus();
  ASSERT_TRUE(real.has_value()) << "this machine's /sys/devices/system/cpu/online";
  EXPECT_FALSE(real->empty());
}

// On a thread of its own (the test's thread keeps its mask): binds, then leaves the now restricted thread alone.
TEST(ThreadAffinity, BindsARealThreadOnceAndThenRespectsIt) {
  std::string skip;
  std::thread([&] {
    const CpuSet allowed = currentThreadCpus();
    if (allowed.size() < 2) {
      skip = "this process may run on one CPU only (" + allowed.toList() + "): nothing to narrow";
      return;
    }
    // The online CPUs as this thread sees them, so that its mask counts as unrestricted.
    const FakeSysfs sysfs(allowed.toList());
    Params params;
    params.set("PEERLINK_SYSFS_ROOT", sysfs.root());
    const std::string gpuCpus = std::to_string(allowed.cpus().back());
    const AffinityDecision first = bindCurrentThreadNearGpu(params, gpuCpus, "test thread");
    ASSERT_TRUE(first.bindTo.has_value()) << first.reason;
    EXPECT_EQ(currentThreadCpus().toList(), gpuCpus);
    const AffinityDecision second = bindCurrentThreadNearGpu(params, std::to_string(allowed.cpus().front()), "again");
    EXPECT_FALSE(second.bindTo.has_value());
    EXPECT_NE(second.reason.find("already restricted to CPUs " + gpuCpus), std::string::npos) << second.reason;
    EXPECT_EQ(currentThreadCpus().toList(), gpuCpus);
    // A thread it starts inherits the mask.
    std::string child;
    std::thread([&] { child = currentThreadCpus().toList(); }).join();
    EXPECT_EQ(child, gpuCpus);

    params.set("PEERLINK_CPU_AFFINITY", "off");
    EXPECT_EQ(decideNearGpu(params, gpuCpus).reason, "PEERLINK_CPU_AFFINITY=off: left where it may run");
  }).join();
  if (!skip.empty()) GTEST_SKIP() << skip;
}

TEST(ThreadAffinity, AMaskTheKernelRefusesIsAnErrorNamingTheCpus) {
  std::thread([] {
    const CpuSet before = currentThreadCpus();
    try {
      setCurrentThreadCpus(cpus("65000"));
      ADD_FAILURE() << "no error";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::SystemError);
      EXPECT_NE(std::string(error.what()).find("sched_setaffinity to CPUs 65000"), std::string::npos) << error.what();
    }
    EXPECT_EQ(currentThreadCpus(), before);
  }).join();
}

TEST(LaunchThreadsAffinity, EachThreadRunsOnItsIndexsCpusTheCallerKeepsItsOwn) {
  const CpuSet allowed = currentThreadCpus();
  if (allowed.size() < 2) GTEST_SKIP() << "this process may run on one CPU only (" << allowed.toList() << ")";
  const int first = allowed.cpus().front();
  const int last = allowed.cpus().back();
  std::mutex mutex;
  std::vector<std::string> seen(3);
  {
    // Index 1 bound to the last CPU, index 2 to the first; index 0 (the caller) is never bound. Awake threads and
    // no taking back: each job runs on its own thread.
    coll::LaunchThreads threads(3, nullptr, std::chrono::hours(1), std::chrono::hours(1),
                                {CpuSet({first}), CpuSet({last}), CpuSet({first})});
    threads.run([&](int index, bool) {
      const std::lock_guard<std::mutex> lock(mutex);
      seen[static_cast<std::size_t>(index)] = currentThreadCpus().toList();
    });
  }
  EXPECT_EQ(seen[0], allowed.toList());
  EXPECT_EQ(seen[1], std::to_string(last));
  EXPECT_EQ(seen[2], std::to_string(first));
  EXPECT_EQ(currentThreadCpus(), allowed);
}

}  // namespace
}  // namespace peerlink
