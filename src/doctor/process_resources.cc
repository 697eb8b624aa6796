// What this process has left (platform_snapshot.hpp, readProcessResources): the facts behind the doctor's root
// causes, read from a real or fake /proc, /sys and /dev.
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "core/file_descriptor.hpp"
#include "core/system_file.hpp"
#include "core/text.hpp"
#include "doctor/platform_snapshot.hpp"

namespace peerlink {
namespace {

// A reading of this process's own state that failed: the failure itself may be the evidence (EMFILE).
void readingFailed(PlatformSnapshot& snapshot, const std::string& what, const std::string& path, int error) {
  snapshot.unreadable.push_back(fmt::format("{}: {}", what, systemFileFailure(path, error)));
  if (error != ENOENT) snapshot.failed.push_back(snapshot.unreadable.back());
}

void readOpenFiles(const PlatformRoots& roots, PlatformSnapshot& snapshot) {
  const std::string path = roots.proc + "/self/fd";
  DIR* directory = ::opendir(path.c_str());
  if (directory == nullptr) {
    readingFailed(snapshot, "open descriptors", path, errno);
    return;
  }
  // Listing the live /proc/self/fd holds one descriptor more: the listing's own.
  const std::string own = roots.proc == "/proc" ? std::to_string(::dirfd(directory)) : std::string();
  long count = 0;
  while (const dirent* entry = ::readdir(directory)) {
    const std::string name = entry->d_name;
    if (name != "." && name != ".." && name != own) ++count;
  }
  ::closedir(directory);
  snapshot.openFiles = count;
}

void readAddressSpaceLimit(const PlatformRoots& roots, PlatformSnapshot& snapshot) {
  if (roots.addressSpaceLimitOverride) {
    snapshot.addressSpaceLimit = *roots.addressSpaceLimitOverride;
    return;
  }
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      limit.rlim_cur > static_cast<rlim_t>(LLONG_MAX)) {
    return;
  }
  snapshot.addressSpaceLimit = static_cast<std::int64_t>(limit.rlim_cur);
}

// "MemAvailable:   12345678 kB" -> bytes.
void readMemAvailable(const PlatformRoots& roots, PlatformSnapshot& snapshot) {
  const std::string path = roots.proc + "/meminfo";
  int error = 0;
  const std::optional<std::string> text = readSystemFile(path, &error);
  if (!text) {
    readingFailed(snapshot, "available memory", path, error);
    return;
  }
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    const long long kib = std::atoll(line.c_str() + 13);
    if (kib >= 0) snapshot.memAvailableBytes = static_cast<std::int64_t>(kib) * 1024;
    return;
  }
}

std::optional<std::int64_t> readBytes(const std::string& path) {
  int error = 0;
  const std::optional<std::string> text = readSystemFile(path, &error, 64);
  if (!text) return std::nullopt;
  const std::string value = trimSpace(*text);
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos || value.size() > 18) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(std::atoll(value.c_str()));
}

// cgroup v2: "0::/user.slice/job" in /proc/self/cgroup; memory.max ("max" when unlimited) and memory.current
// under /sys/fs/cgroup/<path>.
void readCgroupMemory(const PlatformRoots& roots, PlatformSnapshot& snapshot) {
  int error = 0;
  const std::optional<std::string> text = readSystemFile(roots.proc + "/self/cgroup", &error);
  if (!text) {
    if (error != ENOENT) readingFailed(snapshot, "memory cgroup", roots.proc + "/self/cgroup", error);
    return;
  }
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("0::", 0) != 0) continue;
    const std::string group = roots.sys + "/fs/cgroup" + trimSpace(line.substr(3));
    const std::optional<std::int64_t> max = readBytes(group + "/memory.max");
    const std::optional<std::int64_t> current = readBytes(group + "/memory.current");
    if (max && current) snapshot.cgroupMemoryFreeBytes = *max > *current ? *max - *current : 0;
    return;
  }
}

// The device files every CUDA and NVML process opens (nvidiactl, nvidia-uvm) and the GPUs' (nvidia<minor>): one
// that is missing or cannot be opened hides GPUs from this process or stops CUDA. A GPU's file is named by the
// driver's minor number, not NVML's index (a container given GPUs 2 and 3 has /dev/nvidia2 and /dev/nvidia3 and
// NVML indices 0 and 1), so the GPUs' files are those present, each opened.
void readGpuDeviceFiles(const PlatformRoots& roots, PlatformSnapshot& snapshot) {
  std::vector<std::string> gpus;
  if (DIR* directory = ::opendir(roots.dev.c_str())) {
    while (const dirent* entry = ::readdir(directory)) {
      const std::string name = entry->d_name;
      if (name.size() > 6 && name.rfind("nvidia", 0) == 0 &&
          name.find_first_not_of("0123456789", 6) == std::string::npos) {
        gpus.push_back(name);
      }
    }
    ::closedir(directory);
    std::sort(gpus.begin(), gpus.end(), [](const std::string& a, const std::string& b) {
      return a.size() != b.size() ? a.size() < b.size() : a < b;
    });
    if (gpus.empty()) {
      snapshot.gpuDeviceFiles.push_back(
          fmt::format("{}/nvidia<N>: no GPU's device file in this process's /dev", roots.dev));
    }
  }
  std::vector<std::string> names = {"nvidiactl", "nvidia-uvm"};
  names.insert(names.end(), gpus.begin(), gpus.end());
  for (const std::string& name : names) {
    const std::string path = roots.dev + "/" + name;
    const FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (file) continue;
    const int error = errno;
    snapshot.gpuDeviceFiles.push_back(fmt::format(
        "{}: {}{}", path, std::strerror(error),
        error == ENOENT ? " (not in this container or namespace, or the driver's module is not loaded)" : ""));
  }
}

}  // namespace

void readProcessResources(const PlatformRoots& roots, PlatformSnapshot& snapshot) {
  readOpenFiles(roots, snapshot);
  readAddressSpaceLimit(roots, snapshot);
  readMemAvailable(roots, snapshot);
  readCgroupMemory(roots, snapshot);
  readGpuDeviceFiles(roots, snapshot);
}

}  // namespace peerlink
