// Running peerlink's own threads near their GPU: on the CPUs of the GPU's NUMA node (sysfs local_cpulist),
// so a thread that launches work on the GPU or copies through pinned memory does not cross the socket
// interconnect. PEERLINK_CPU_AFFINITY=auto|off.
//
// The decision is a pure function (decideThreadAffinity) of the GPU's CPU list, the thread's current mask and
// the machine's online CPUs; the system calls around it are thin. A mask the user set (taskset, numactl, a job
// scheduler's cgroup, a framework's own binding) is respected: only a thread allowed on every online CPU is
// narrowed. Threads inherit their creator's mask, so a bound thread's children run there too.
#pragma once

#include <optional>
#include <string>

#include "core/cpu_set.hpp"

namespace peerlink {

class Params;

enum class AffinityMode { Auto, Off };

/// PEERLINK_CPU_AFFINITY from `params`.
AffinityMode affinityModeFrom(const Params& params);

/// What to do with one thread: bind it to `bindTo`, or leave it (nullopt), and why, in one line.
struct AffinityDecision {
  std::optional<CpuSet> bindTo;
  std::string reason;
};

/// The mask for a thread working for a GPU whose local CPUs are `gpuCpuList` (a CPU list; "" unknown), given
/// the thread's `current` mask and the `online` CPUs. Binds only in Auto mode, when the list is known and
/// well-formed, when the thread may run on every online CPU (anything narrower was set by someone: left as
/// is), and when the GPU's CPUs are some but not all of them; the set is then the GPU's CPUs that are online.
AffinityDecision decideThreadAffinity(AffinityMode mode, const std::string& gpuCpuList, const CpuSet& current,
                                      const CpuSet& online);

/// The calling thread's mask (sched_getaffinity); throws Error(SystemError) when it cannot be read.
CpuSet currentThreadCpus();

/// The CPUs online, from `<sysfsRoot>/devices/system/cpu/online`; nullopt when unreadable or malformed.
std::optional<CpuSet> onlineCpus(const std::string& sysfsRoot = "/sys");

/// Sets the calling thread's mask (sched_setaffinity on this thread only); throws Error(SystemError) naming
/// the CPUs when the kernel refuses them.
void setCurrentThreadCpus(const CpuSet& cpus);

/// Decides for the calling thread (its mask, the online CPUs under PEERLINK_SYSFS_ROOT, PEERLINK_CPU_AFFINITY)
/// and applies the decision; logs it at INFO (INIT) naming `who` ("exporting process of GPU 2"). Never throws: a
/// mask that cannot be read or set leaves the thread as it is, and the reason says so.
AffinityDecision bindCurrentThreadNearGpu(const Params& params, const std::string& gpuCpuList, const std::string& who);

/// The decision bindCurrentThreadNearGpu takes, without applying it: for the calling thread, or for a thread it
/// starts (which inherits its mask) and that applies it itself. Never throws.
AffinityDecision decideNearGpu(const Params& params, const std::string& gpuCpuList);

}  // namespace peerlink
