// What a process holds, read from /proc/self and cudaMemGetInfo: the soak and failure-injection tests measure
// it once the first cycle has made everything that lives as long as the process (CUDA contexts, the driver's
// threads, the discovered topology), and again at the end, and require the same.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace peerlink::testing {

struct ResourceUsage {
  int fds = 0;                          ///< entries of /proc/self/fd
  int threads = 0;                      ///< "Threads:" of /proc/self/status
  long mappings = 0;                    ///< lines of /proc/self/maps
  long vmKiB = 0;                       ///< VmSize: mapped memory
  long reservedKiB = 0;                 ///< of it, address space without access (PROT_NONE): nothing behind it
  long rssKiB = 0;                      ///< VmRSS
  std::vector<std::size_t> deviceFree;  ///< cudaMemGetInfo's free bytes, per GPU measured
  std::vector<std::string> fdTargets;   ///< what each descriptor is ("/dev/nvidiactl", "socket:[123]"), sorted
  std::vector<std::string> regions;     ///< each mapping: "<size> KiB <permissions> <path>", sorted
};

namespace detail {

// One line of /proc/self/maps.
struct Region {
  unsigned long long kib = 0;
  std::string permissions;  ///< "rw-p"; "---p": address space reserved without access
  std::string path;         ///< "" for anonymous memory
};

inline Region parseRegion(const std::string& line) {
  std::istringstream fields(line);
  std::string range;
  std::string offset;
  std::string deviceNumbers;
  std::string inode;
  Region region;
  fields >> range >> region.permissions >> offset >> deviceNumbers >> inode;
  std::getline(fields >> std::ws, region.path);
  const std::size_t dash = range.find('-');
  if (dash != std::string::npos) {
    region.kib =
        (std::stoull(range.substr(dash + 1), nullptr, 16) - std::stoull(range.substr(0, dash), nullptr, 16)) >> 10;
  }
  return region;
}

// "4 KiB rw-p /usr/lib/libc.so.6": addresses left out so that a mapping made again elsewhere compares equal.
inline std::string describeRegion(const Region& region) {
  return fmt::format("{} KiB {} {}", region.kib, region.permissions, region.path.empty() ? "(anonymous)" : region.path);
}

// The entries of `after` not in `before` (both sorted), at most `limit` of them, joined with ", ".
inline std::string appeared(const std::vector<std::string>& before, const std::vector<std::string>& after,
                            std::size_t limit = 6) {
  std::vector<std::string> added;
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(), std::back_inserter(added));
  std::string text;
  for (std::size_t i = 0; i < added.size() && i < limit; ++i) text += (i ? ", " : "") + added[i];
  if (added.size() > limit) text += fmt::format(" and {} more", added.size() - limit);
  return text;
}

}  // namespace detail

/// What this process holds now, with the free memory of `devices` (none: no CUDA call).
inline ResourceUsage measureUsage(const std::vector<int>& devices) {
  ResourceUsage usage;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    const std::string own = std::to_string(::dirfd(dir));
    while (const dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] == '.') continue;
      ++usage.fds;
      if (entry->d_name == own) continue;
      char target[512];
      const ssize_t length =
          ::readlink((std::string("/proc/self/fd/") + entry->d_name).c_str(), target, sizeof target - 1);
      usage.fdTargets.emplace_back(length > 0 ? std::string(target, static_cast<std::size_t>(length)) : "?");
    }
    ::closedir(dir);
    std::sort(usage.fdTargets.begin(), usage.fdTargets.end());
  }
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    std::istringstream fields(line);
    std::string key;
    long value = 0;
    fields >> key >> value;
    if (key == "Threads:") usage.threads = static_cast<int>(value);
    if (key == "VmSize:") usage.vmKiB = value;
    if (key == "VmRSS:") usage.rssKiB = value;
  }
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    ++usage.mappings;
    const detail::Region region = detail::parseRegion(line);
    usage.regions.push_back(detail::describeRegion(region));
    if (region.permissions.rfind("---", 0) == 0) usage.reservedKiB += static_cast<long>(region.kib);
  }
  std::sort(usage.regions.begin(), usage.regions.end());
  int previous = 0;
  if (!devices.empty()) cudaGetDevice(&previous);
  for (const int device : devices) {
    std::size_t free = 0;
    std::size_t total = 0;
    if (cudaSetDevice(device) != cudaSuccess || cudaMemGetInfo(&free, &total) != cudaSuccess) cudaGetLastError();
    usage.deviceFree.push_back(free);
  }
  if (!devices.empty()) cudaSetDevice(previous);
  return usage;
}

/// "12 fds, 9 threads, 612 mappings, 35.2 GiB mapped, 410 MiB resident, GPU free 139.1 139.1 GiB".
inline std::string describeUsage(const ResourceUsage& usage) {
  std::string gpus;
  for (const std::size_t free : usage.deviceFree)
    gpus += fmt::format(" {:.3f}", static_cast<double>(free) / double(1 << 30));
  return fmt::format("{} fds, {} threads, {} mappings, {:.1f} GiB mapped, {} MiB resident{}", usage.fds, usage.threads,
                     usage.mappings, static_cast<double>(usage.vmKiB) / double(1 << 20), usage.rssKiB >> 10,
                     gpus.empty() ? "" : ", GPU free (GiB)" + gpus);
}

/// Whether usageGrowth counts address space reserved without access (PROT_NONE) as mapped memory.
enum class Reservations { Counted, Ignored };

/// "" when `after` holds what `before` did: the same descriptors and threads, and mapped memory and each GPU's
/// memory within `slackBytes` (allocators keep some memory cached); else what grew. A leak of one descriptor,
/// thread or mapping per cycle shows; so does one of more than slackBytes / cycles bytes.
inline std::string usageGrowth(const ResourceUsage& before, const ResourceUsage& after, std::size_t slackBytes,
                               Reservations reservations = Reservations::Counted) {
  std::string growth;
  const auto add = [&](const std::string& what) { growth += (growth.empty() ? "" : "; ") + what; };
  if (after.fds != before.fds) {
    const std::string added = detail::appeared(before.fdTargets, after.fdTargets);
    add(fmt::format("descriptors {} -> {}{}", before.fds, after.fds, added.empty() ? "" : " (new: " + added + ")"));
  }
  if (after.threads != before.threads) add(fmt::format("threads {} -> {}", before.threads, after.threads));
  const long slackKiB = static_cast<long>(slackBytes >> 10);
  const bool ignored = reservations == Reservations::Ignored;
  if (after.vmKiB - (ignored ? after.reservedKiB : 0) > before.vmKiB - (ignored ? before.reservedKiB : 0) + slackKiB) {
    const std::string added = detail::appeared(before.regions, after.regions);
    add(fmt::format("mapped memory {} -> {} KiB ({} -> {} mappings{})", before.vmKiB, after.vmKiB, before.mappings,
                    after.mappings, added.empty() ? "" : "; new: " + added));
  }
  for (std::size_t d = 0; d < before.deviceFree.size() && d < after.deviceFree.size(); ++d) {
    if (after.deviceFree[d] + slackBytes < before.deviceFree[d]) {
      add(fmt::format("free memory of the GPU measured {} {} -> {} MiB", d, before.deviceFree[d] >> 20,
                      after.deviceFree[d] >> 20));
    }
  }
  return growth;
}

}  // namespace peerlink::testing
