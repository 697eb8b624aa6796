// Binding peerlink's threads near their GPU (cpu_affinity.hpp).
#include "core/cpu_affinity.hpp"

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/log.hpp"
#include "peerlink/error.hpp"
#include "peerlink/params.hpp"

namespace peerlink {
namespace {

// Masks are sized for the machine, not fixed at CPU_SETSIZE (1024): larger machines exist.
constexpr int kMaskCpus = CpuSet::kMaxCpu + 1;

struct DynamicMask {
  cpu_set_t* mask = CPU_ALLOC(kMaskCpus);
  std::size_t bytes = CPU_ALLOC_SIZE(kMaskCpus);
  DynamicMask() {
    if (mask == nullptr) throw Error(ErrorCode::SystemError, "CPU_ALLOC: out of memory for a CPU mask");
    CPU_ZERO_S(bytes, mask);
  }
  ~DynamicMask() { CPU_FREE(mask); }
  DynamicMask(const DynamicMask&) = delete;
  DynamicMask& operator=(const DynamicMask&) = delete;
};

}  // namespace

AffinityMode affinityModeFrom(const Params& params) {
  return params.getString("PEERLINK_CPU_AFFINITY") == "off" ? AffinityMode::Off : AffinityMode::Auto;
}

AffinityDecision decideThreadAffinity(AffinityMode mode, const std::string& gpuCpuList, const CpuSet& current,
                                      const CpuSet& online) {
  if (mode == AffinityMode::Off) return {std::nullopt, "PEERLINK_CPU_AFFINITY=off: left where it may run"};
  if (gpuCpuList.empty()) {
    return {std::nullopt,
            "the GPU's local CPUs are unknown (sysfs has no local_cpulist for it): left where it may run"};
  }
  const std::optional<CpuSet> gpu = CpuSet::parse(gpuCpuList);
  if (!gpu) {
    return {std::nullopt, fmt::format("the GPU's local CPU list '{}' is malformed: left where it may run", gpuCpuList)};
  }
  if (online.empty()) return {std::nullopt, "the online CPUs are unknown: left where it may run"};
  if (!online.isSubsetOf(current)) {
    return {std::nullopt,
            fmt::format("already restricted to CPUs {} of the online {} (taskset, numactl, a cgroup or the "
                        "application): left as is",
                        current.toList(), online.toList())};
  }
  const CpuSet near = gpu->intersect(online);
  if (near.empty()) {
    return {std::nullopt, fmt::format("the GPU's local CPUs {} are none of the online CPUs {}: left where it may run",
                                      gpu->toList(), online.toList())};
  }
  if (online.isSubsetOf(near)) {
    return {std::nullopt, fmt::format("the GPU's local CPUs {} are every online CPU (one NUMA node): nothing to narrow",
                                      near.toList())};
  }
  return {near,
          fmt::format("bound to CPUs {}, the GPU's NUMA node (of the online {})", near.toList(), online.toList())};
}

CpuSet currentThreadCpus() {
  DynamicMask set;
  if (::sched_getaffinity(0, set.bytes, set.mask) != 0) {
    throw Error(ErrorCode::SystemError, fmt::format("sched_getaffinity: {}", std::strerror(errno)));
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < kMaskCpus; ++cpu) {
    if (CPU_ISSET_S(static_cast<std::size_t>(cpu), set.bytes, set.mask)) cpus.push_back(cpu);
  }
  return CpuSet(std::move(cpus));
}

std::optional<CpuSet> onlineCpus(const std::string& sysfsRoot) {
  std::ifstream in(sysfsRoot + "/devices/system/cpu/online");
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return std::nullopt;
  std::optional<CpuSet> online = CpuSet::parse(text.str());
  if (!online || online->empty()) return std::nullopt;
  return online;
}

void setCurrentThreadCpus(const CpuSet& cpus) {
  DynamicMask set;
  for (const int cpu : cpus.cpus()) CPU_SET_S(static_cast<std::size_t>(cpu), set.bytes, set.mask);
  if (::sched_setaffinity(0, set.bytes, set.mask) != 0) {
    throw Error(ErrorCode::SystemError,
                fmt::format("sched_setaffinity to CPUs {}: {}", cpus.toList(), std::strerror(errno)));
  }
}

AffinityDecision decideNearGpu(const Params& params, const std::string& gpuCpuList) {
  try {
    const std::optional<CpuSet> online = onlineCpus(params.getString("PEERLINK_SYSFS_ROOT"));
    return decideThreadAffinity(affinityModeFrom(params), gpuCpuList, currentThreadCpus(), online.value_or(CpuSet()));
  } catch (const std::exception& error) {
    return {std::nullopt, fmt::format("{}: left where it may run", error.what())};
  }
}

AffinityDecision bindCurrentThreadNearGpu(const Params& params, const std::string& gpuCpuList, const std::string& who) {
  AffinityDecision decision = decideNearGpu(params, gpuCpuList);
  if (decision.bindTo) {
    try {
      setCurrentThreadCpus(*decision.bindTo);
    } catch (const std::exception& error) {
      decision = {std::nullopt, fmt::format("{}: left where it may run", error.what())};
    }
  }
  logInfo(LogSubsys::Init, "CPU affinity of the {}: {}", who, decision.reason);
  return decision;
}

}  // namespace peerlink
