#include "doctor/shortage_checks.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/process_limits.hpp"

namespace peerlink {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
constexpr std::int64_t kMiB = std::int64_t{1} << 20;
constexpr std::int64_t kLowMemory = 512 * kMiB;

// The shortage findings, by what ran short; a consequence names the first present.
const char* const kFileCauses[] = {"open_file_limit", "out_of_file_descriptors"};
const char* const kMemoryCauses[] = {"address_space_limit", "memory_low", "out_of_memory"};
const char* const kPermissionCauses[] = {"gpu_device_files"};

template <std::size_t N>
bool among(const std::string& code, const char* const (&codes)[N]) {
  return std::find(std::begin(codes), std::end(codes), code) != std::end(codes);
}

bool isShortage(const std::string& code) {
  return among(code, kFileCauses) || among(code, kMemoryCauses) || among(code, kPermissionCauses);
}

bool contains(const std::string& text, const char* needle) {
  return text.find(needle) != std::string::npos;
}

std::string gibibytes(std::int64_t bytes) {
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / static_cast<double>(kGiB));
}

struct Shortages {
  std::vector<Finding>& findings;

  bool has(const char* code) const {
    return std::any_of(findings.begin(), findings.end(), [&](const Finding& f) { return f.code == code; });
  }
  template <std::size_t N>
  std::string first(const char* const (&codes)[N]) const {
    for (const char* code : codes) {
      if (has(code)) return code;
    }
    return "";
  }
  void add(const char* code, std::string summary, std::string fix) {
    if (!has(code)) findings.push_back(Finding{code, Verdict::Degraded, std::move(summary), std::move(fix), {}, ""});
  }
  // The shortage that explains these failures: what their text says ran short, else the only shortage there is.
  std::string causeOf(const std::vector<std::string>& failures) {
    for (const std::string& failure : failures) {
      const std::string kind = shortageOf(failure);
      if (kind == "files") {
        if (first(kFileCauses).empty()) {
          add("out_of_file_descriptors",
              fmt::format("this process ran out of file descriptors while the doctor read the system ({})", failure),
              "raise the open-file limit (ulimit -n 65536; LimitNOFILE= in a systemd unit; docker run --ulimit "
              "nofile=65536:65536) or close what holds them, then run peerlink doctor again");
        }
        return first(kFileCauses);
      }
      if (kind == "memory") {
        if (first(kMemoryCauses).empty()) {
          add("out_of_memory",
              fmt::format("this process ran out of memory while the doctor read the system ({})", failure),
              "free memory or raise the process's memory limits, then run peerlink doctor again");
        }
        return first(kMemoryCauses);
      }
      if (kind == "permission" && has("gpu_device_files")) return "gpu_device_files";
    }
    std::vector<std::string> present;
    for (const Finding& finding : findings) {
      if (isShortage(finding.code)) present.push_back(finding.code);
    }
    return present.size() == 1 ? present.front() : "";
  }
};

void addProcessShortages(const PlatformSnapshot& snapshot, Shortages& shortages) {
  const long limit = snapshot.openFileLimit;
  if (limit > 0 && snapshot.openFiles >= 0 && limit - snapshot.openFiles < kFewDescriptorsLeft &&
      !shortages.has("open_file_limit")) {
    shortages.add("out_of_file_descriptors",
                  fmt::format("this process holds {} file descriptors of the {} its limit allows (RLIMIT_NOFILE): "
                              "the next socket, exported memory handle or file it opens fails with EMFILE",
                              snapshot.openFiles, limit),
                  "raise the open-file limit (ulimit -n 65536) or close what holds the descriptors");
  }
  if (snapshot.addressSpaceLimit >= 0 && snapshot.addressSpaceLimit < kCudaAddressSpaceBytes) {
    shortages.add("address_space_limit",
                  fmt::format("this process's address space is limited to {} (RLIMIT_AS, ulimit -v): CUDA reserves "
                              "address space for every GPU's memory and the host's when it starts, so cuInit or "
                              "allocations fail with out-of-memory errors, and NVML or sysfs readings may fail",
                              gibibytes(snapshot.addressSpaceLimit)),
                  "lift the limit: ulimit -v unlimited (or the job scheduler's address-space or virtual-memory limit; "
                  "limit resident memory instead, e.g. a cgroup's memory.max)");
  }
  const bool hostLow = snapshot.memAvailableBytes >= 0 && snapshot.memAvailableBytes < kLowMemory;
  const bool cgroupLow = snapshot.cgroupMemoryFreeBytes >= 0 && snapshot.cgroupMemoryFreeBytes < kLowMemory;
  if (hostLow || cgroupLow) {
    shortages.add("memory_low",
                  fmt::format("this process is nearly out of memory: {}; pinned host buffers, the second process of "
                              "the cross-process probe and the driver's own allocations may fail",
                              cgroupLow ? fmt::format("its cgroup has {} MiB left below memory.max",
                                                      snapshot.cgroupMemoryFreeBytes / kMiB)
                                        : fmt::format("the machine has {} MiB available (MemAvailable)",
                                                      snapshot.memAvailableBytes / kMiB)),
                  "free memory (other jobs, page cache pinned by tmpfs files), or raise the cgroup's memory.max "
                  "(docker run --memory, the scheduler's memory request)");
  }
  if (!snapshot.gpuDeviceFiles.empty()) {
    shortages.add("gpu_device_files",
                  fmt::format("this process cannot open the NVIDIA device files {}: CUDA and NVML cannot reach the "
                              "GPUs behind them, so what they would read fails",
                              fmt::join(snapshot.gpuDeviceFiles, "; ")),
                  "give the process the GPUs' device files (docker run --gpus, the container's device list, the "
                  "cgroup's device rules; mode 0666 for the video group); load the driver's modules (nvidia-modprobe "
                  "-u -c=0 for nvidia-uvm)");
  }
}

// One finding per kind of reading, naming each GPU with the reason its reading failed.
void addFailedReadings(const Topology& topology, const PlatformSnapshot& snapshot, Shortages& shortages) {
  const auto gpuName = [&](std::size_t i) { return fmt::format("GPU {} ({})", i, topology.gpus[i].pciBusId); };
  std::vector<int> nvlinkGpus;
  std::vector<std::string> nvlinkParts;
  std::vector<std::string> nvlinkFailures;
  std::vector<int> sysfsGpus;
  std::vector<std::string> sysfsParts;
  std::vector<std::string> sysfsFailures;
  std::map<std::string, std::vector<std::string>> nvlinkByReason;  // one line per reason: NVML fails for all alike
  for (std::size_t i = 0; i < topology.gpus.size(); ++i) {
    const FailedReadings& failed = topology.gpus[i].failed;
    if (!failed.nvlink.empty()) {
      nvlinkGpus.push_back(static_cast<int>(i));
      nvlinkByReason[failed.nvlink].push_back(gpuName(i));
      nvlinkFailures.push_back(failed.nvlink);
    }
    bool any = false;
    for (const auto& [what, why] : {std::pair<const char*, const std::string&>{"NUMA node", failed.numa},
                                    {"PCIe link", failed.pcieLink},
                                    {"PCI path", failed.pciPath}}) {
      if (why.empty()) continue;
      sysfsParts.push_back(fmt::format("the {} of {} ({})", what, gpuName(i), why));
      sysfsFailures.push_back(why);
      any = true;
    }
    if (any) sysfsGpus.push_back(static_cast<int>(i));
  }
  for (const auto& [why, gpus] : nvlinkByReason)
    nvlinkParts.push_back(fmt::format("{}: {}", fmt::join(gpus, ", "), why));
  std::vector<Finding> consequences;
  if (!nvlinkGpus.empty()) {
    consequences.push_back(
        Finding{"nvlink_unreadable", Verdict::Ok,
                fmt::format("could not read the NVLink state of {}: the NVLink checks skip these GPUs, their pairs' "
                            "NVLink counts are lower bounds, and the PCIe checks (ACS, IOMMU, BAR1, peer limit) skip "
                            "pairs that may have NVLink",
                            fmt::join(nvlinkParts, "; ")),
                "fix the cause, then run peerlink doctor again; by hand: nvidia-smi nvlink --status", nvlinkGpus,
                shortages.causeOf(nvlinkFailures)});
  }
  if (!sysfsGpus.empty()) {
    consequences.push_back(Finding{
        "sysfs_unreadable", Verdict::Ok,
        fmt::format("could not read {}: the checks that need them skip these GPUs", fmt::join(sysfsParts, "; ")),
        "fix the cause, then run peerlink doctor again; by hand: ls -l "
        "/sys/bus/pci/devices/<bus id>/ and lspci -vv -s <bus id>",
        sysfsGpus, shortages.causeOf(sysfsFailures)});
  }
  std::vector<std::string> platform;
  for (const std::string& line : snapshot.failed) {
    if (line.rfind("ACS control", 0) != 0) platform.push_back(line);  // acs_unknown reports those
  }
  if (!platform.empty()) {
    consequences.push_back(
        Finding{"platform_unreadable",
                Verdict::Ok,
                fmt::format("could not read {}: the checks built on them say nothing", fmt::join(platform, "; ")),
                "fix the cause, then run peerlink doctor again",
                {},
                shortages.causeOf(platform)});
  }
  for (Finding& finding : shortages.findings) {
    if (finding.code != "acs_unknown" || !finding.cause.empty()) continue;
    std::vector<std::string> bridges;
    for (const PlatformSnapshot::Bridge& bridge : snapshot.bridges) {
      if (!bridge.acsKnown && bridge.unreadable.rfind("cannot read", 0) == 0) bridges.push_back(bridge.unreadable);
    }
    if (!bridges.empty()) finding.cause = shortages.causeOf(bridges);
  }
  shortages.findings.insert(shortages.findings.end(), consequences.begin(), consequences.end());
}

}  // namespace

std::string shortageOf(const std::string& failure) {
  if (contains(failure, "Too many open files") || contains(failure, "EMFILE") || contains(failure, "ENFILE") ||
      contains(failure, "file table overflow") || contains(failure, "open files in system")) {
    return "files";
  }
  if (contains(failure, "Cannot allocate memory") || contains(failure, "ENOMEM") ||
      contains(failure, "Insufficient Memory") || contains(failure, "out of memory") ||
      contains(failure, "cudaErrorMemoryAllocation") || contains(failure, "CUDA_ERROR_OUT_OF_MEMORY")) {
    return "memory";
  }
  if (contains(failure, "Permission denied") || contains(failure, "Operation not permitted") ||
      contains(failure, "Insufficient Permissions") || contains(failure, "No Permission")) {
    return "permission";
  }
  return "";
}

void checkShortages(const Topology& topology, const PlatformSnapshot& snapshot, std::vector<Finding>& findings) {
  Shortages shortages{findings};
  addProcessShortages(snapshot, shortages);
  addFailedReadings(topology, snapshot, shortages);
}

void orderByCause(std::vector<Finding>& findings) {
  std::set<std::string> causes;
  for (const Finding& finding : findings) causes.insert(finding.code);
  std::vector<Finding> ordered;
  ordered.reserve(findings.size());
  std::vector<bool> placed(findings.size(), false);
  for (std::size_t i = 0; i < findings.size(); ++i) {
    if (placed[i]) continue;
    const bool rooted = !findings[i].cause.empty() && causes.count(findings[i].cause) != 0;
    if (rooted) continue;  // placed under its cause
    ordered.push_back(findings[i]);
    placed[i] = true;
    for (std::size_t j = 0; j < findings.size(); ++j) {
      if (!placed[j] && findings[j].cause == findings[i].code && findings[j].code != findings[i].code) {
        ordered.push_back(findings[j]);
        placed[j] = true;
      }
    }
  }
  for (std::size_t i = 0; i < findings.size(); ++i) {  // consequences of consequences, or of a cycle: as they were
    if (!placed[i]) ordered.push_back(findings[i]);
  }
  findings = std::move(ordered);
}

std::string explainStartFailure(const std::string& failure, const std::vector<Finding>& findings) {
  std::vector<std::string> causes;
  for (const Finding& finding : findings) {
    if (isShortage(finding.code))
      causes.push_back(fmt::format("{} [{}] (fix: {})", finding.summary, finding.code, finding.fix));
  }
  if (causes.empty()) return failure;
  return fmt::format("{}; the likely cause: {}", failure, fmt::join(causes, "; and "));
}

}  // namespace peerlink
