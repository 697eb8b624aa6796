// Reading the doctor's platform facts from a (real or fake) /sys, /proc and /dev.
#include "doctor/platform_snapshot.hpp"

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "core/system_file.hpp"
#include "core/text.hpp"
#include "peerlink/error.hpp"
#include "topology/sysfs_pci.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;

// The inode numbers the kernel gives its initial namespaces (include/linux/proc_ns.h, Linux 3.8 and
// later): readlink /proc/self/ns/pid says "pid:[4026531836]" outside any container.
constexpr unsigned long long kInitPidNamespaceInode = 0xEFFFFFFCULL;
constexpr unsigned long long kInitIpcNamespaceInode = 0xEFFFFFFFULL;

constexpr std::size_t kExtendedConfigStart = 0x100;
constexpr std::size_t kConfigSpaceBytes = 4096;
constexpr std::uint16_t kAcsCapabilityId = 0x000D;

// The file's text, or nullopt. A failure other than the file's absence (no descriptor, memory or permission
// left to this process) is kept in snapshot.failed as "`what`: cannot read <file>: <why>", with `why` in `*reason`.
std::optional<std::string> readText(const fs::path& file, PlatformSnapshot& snapshot, const char* what,
                                    std::string* reason = nullptr) {
  int error = 0;
  std::optional<std::string> text = readSystemFile(file.string(), &error);
  if (!text) {
    if (reason != nullptr) *reason = systemFileFailure(file.string(), error);
    if (error != ENOENT)
      snapshot.failed.push_back(fmt::format("{}: {}", what, systemFileFailure(file.string(), error)));
  }
  return text;
}

std::optional<std::string> readLink(const fs::path& link) {
  std::error_code ec;
  const fs::path target = fs::read_symlink(link, ec);
  if (ec) return std::nullopt;
  return target.string();
}

bool pathExists(const fs::path& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

bool isHostBridgeName(const std::string& name) {
  return name.compare(0, 3, "pci") == 0;
}

std::uint32_t le32(const std::string& bytes, std::size_t offset) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    value |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return value;
}

void readCommandLine(const PlatformRoots& roots, PlatformSnapshot& snapshot) {
  const fs::path file = fs::path(roots.proc) / "cmdline";
  if (auto text = readText(file, snapshot, "kernel command line")) {
    snapshot.kernelCommandLine = trimSpace(*text);
  } else {
    snapshot.unreadable.push_back(
        fmt::format("kernel command line: cannot read {}: check by hand: cat /proc/cmdline", file.string()));
  }
}

bool cpuinfoHasHypervisorFlag(const std::string& cpuinfo) {
  std::istringstream lines(cpuinfo);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.compare(0, 5, "flags") != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::istringstream flags(line.substr(colon + 1));
    std::string flag;
    while (flags >> flag) {
      if (flag == "hypervisor") return true;
    }
    return false;  // every CPU lists the same flags
  }
  return false;
}

void readHypervisor(const PlatformRoots& roots, PlatformSnapshot& snapshot) {
  bool flag = false;
  const fs::path cpuinfo = fs::path(roots.proc) / "cpuinfo";
  if (auto text = readText(cpuinfo, snapshot, "CPU hypervisor flag")) {
    flag = cpuinfoHasHypervisorFlag(*text);
  } else {
    snapshot.unreadable.push_back(
        fmt::format("CPU hypervisor flag: cannot read {}: check by hand: systemd-detect-virt", cpuinfo.string()));
  }
  const fs::path dmi = fs::path(roots.sys) / "class" / "dmi" / "id";
  const auto vendor = readText(dmi / "sys_vendor", snapshot, "DMI system vendor");
  const auto product = readText(dmi / "product_name", snapshot, "DMI product name");
  if (!vendor && !product) {
    snapshot.unreadable.push_back(
        fmt::format("DMI system vendor: cannot read {}/sys_vendor or product_name: check by hand: systemd-detect-virt",
                    dmi.string()));
  }
  const auto dmiHypervisor = hypervisorFromDmi(trimSpace(vendor.value_or("")), trimSpace(product.value_or("")));
  snapshot.hypervisor = flag || dmiHypervisor.has_value();
  if (dmiHypervisor) snapshot.hypervisorVendor = *dmiHypervisor;
}

// The IOMMU domain type of the GPU's group: "DMA", "DMA-FQ", "identity", "blocked", ...; "none" when the
// device has no group (no IOMMU, or it is off); "" when the device itself could not be found.
std::string readIommuGroupType(const PlatformRoots& roots, const Gpu& gpu, size_t index, PlatformSnapshot& snapshot) {
  std::string busId;
  try {
    busId = normalizePciBusId(gpu.pciBusId);
  } catch (const Error& e) {
    snapshot.unreadable.push_back(fmt::format("IOMMU group of GPU {}: {}", index, e.what()));
    return "";
  }
  const fs::path device = fs::path(roots.sys) / "bus" / "pci" / "devices" / busId;
  if (!pathExists(device)) {
    snapshot.unreadable.push_back(
        fmt::format("IOMMU group of GPU {} ({}): {} does not exist: check by hand: ls -l "
                    "/sys/bus/pci/devices/{}/iommu_group",
                    index, busId, device.string(), busId));
    return "";
  }
  const fs::path link = device / "iommu_group";
  const auto target = readLink(link);
  if (!target) return "none";
  const std::string group = fs::path(*target).filename().string();
  const fs::path typeFile = fs::path(roots.sys) / "kernel" / "iommu_groups" / group / "type";
  if (auto type = readText(typeFile, snapshot, "IOMMU domain type")) return trimSpace(*type);
  // The group's `type` attribute appeared in Linux 4.19.
  snapshot.unreadable.push_back(
      fmt::format("IOMMU domain type of GPU {} ({}, group {}): cannot read {}: check by hand: dmesg | grep -i "
                  "'iommu.*default domain type'",
                  index, busId, group, typeFile.string()));
  return "";
}

void readIommu(const Topology& topology, const PlatformRoots& roots, PlatformSnapshot& snapshot) {
  std::vector<std::string> known;
  for (size_t i = 0; i < topology.gpus.size(); ++i) {
    snapshot.iommuGroupTypes.push_back(readIommuGroupType(roots, topology.gpus[i], i, snapshot));
    if (!snapshot.iommuGroupTypes.back().empty()) known.push_back(snapshot.iommuGroupTypes.back());
  }
  if (known.empty()) return;
  const bool same = std::all_of(known.begin(), known.end(), [&](const std::string& t) { return t == known[0]; });
  snapshot.iommuMode = same ? known[0] : std::string("mixed");
}

std::vector<std::string> gpuPath(const PlatformRoots& roots, const Gpu& gpu, size_t index, PlatformSnapshot& snapshot) {
  if (!gpu.pciPath.empty()) return gpu.pciPath;
  try {
    SysfsPciDevice device = readSysfsPciDevice(roots.sys, gpu.pciBusId);
    if (!device.path.empty()) return device.path;
    snapshot.unreadable.push_back(fmt::format(
        "PCI path of GPU {} ({}): {}: check by hand: readlink -f /sys/bus/pci/devices/{}", index, device.busId,
        device.problems.empty() ? std::string("unknown") : device.problems.front(), device.busId));
  } catch (const Error& e) {
    snapshot.unreadable.push_back(fmt::format("PCI path of GPU {}: {}", index, e.what()));
  }
  return {};
}

}  // namespace

PlatformSnapshot::Bridge readBridge(const PlatformRoots& roots, const std::string& busId, PlatformSnapshot& snapshot) {
  PlatformSnapshot::Bridge bridge;
  bridge.busId = busId;
  const fs::path device = fs::path(roots.sys) / "bus" / "pci" / "devices" / busId;
  const std::string byHand = fmt::format("run as root: sudo lspci -vvv -s {} | grep -i ACSCtl", busId);
  if (auto vendor = readText(device / "vendor", snapshot, "PCI vendor of a bridge")) {
    bridge.vendor = trimSpace(*vendor);
  } else {
    snapshot.unreadable.push_back(fmt::format("PCI vendor of bridge {}: cannot read {}: check by hand: lspci -n -s {}",
                                              busId, (device / "vendor").string(), busId));
  }
  const fs::path configFile = device / "config";
  std::string reason;
  const auto config = readText(configFile, snapshot, "ACS control of a bridge", &reason);
  if (!config) {
    bridge.unreadable = reason;
    snapshot.unreadable.push_back(fmt::format("ACS control of bridge {}: {}: {}", busId, reason, byHand));
    return bridge;
  }
  const AcsReading acs = findAcsControl(*config);
  switch (acs.status) {
    case AcsReading::Status::Found:
      bridge.acsKnown = true;
      bridge.acsRedirect = acsRedirects(acs.control);
      break;
    case AcsReading::Status::NoCapability: bridge.acsKnown = true; break;
    case AcsReading::Status::Short:
      // Without CAP_SYS_ADMIN the kernel returns only the first 64 bytes of config space (128 for
      // CardBus); 256 means the extended space is not accessible at all (no ECAM/MMCONFIG).
      bridge.unreadable = acs.bytes <= 128 ? "reading it needs root" : "the extended config space is not accessible";
      snapshot.unreadable.push_back(fmt::format("ACS control of bridge {}: {} gives {} of {} bytes ({}): {}", busId,
                                                configFile.string(), acs.bytes, kConfigSpaceBytes, bridge.unreadable,
                                                byHand));
      break;
    case AcsReading::Status::Malformed:
      bridge.unreadable = "its extended capability list is malformed";
      snapshot.unreadable.push_back(
          fmt::format("ACS control of bridge {}: the extended capability list in {} is "
                      "malformed: {}",
                      busId, configFile.string(), byHand));
      break;
  }
  return bridge;
}

namespace {

void readBridges(const Topology& topology, const PlatformRoots& roots, PlatformSnapshot& snapshot) {
  std::vector<std::string> busIds;
  for (size_t i = 0; i < topology.gpus.size(); ++i) {
    const std::vector<std::string> path = gpuPath(roots, topology.gpus[i], i, snapshot);
    // path: host bridge, bridges..., the GPU itself.
    for (size_t k = 0; k + 1 < path.size(); ++k) {
      if (isHostBridgeName(path[k])) continue;
      if (std::find(busIds.begin(), busIds.end(), path[k]) == busIds.end()) busIds.push_back(path[k]);
    }
  }
  for (const std::string& busId : busIds) snapshot.bridges.push_back(readBridge(roots, busId, snapshot));
}

void readOpenFileLimit(const PlatformRoots& roots, PlatformSnapshot& snapshot) {
  if (roots.openFileLimitOverride) {
    snapshot.openFileLimit = *roots.openFileLimitOverride;
    return;
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    snapshot.unreadable.push_back("open-file limit: getrlimit(RLIMIT_NOFILE) failed: check by hand: ulimit -n");
    return;
  }
  snapshot.openFileLimit = limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > static_cast<rlim_t>(LONG_MAX)
                               ? LONG_MAX
                               : static_cast<long>(limit.rlim_cur);
}

// "pid:[4026531836]" -> 4026531836.
std::optional<unsigned long long> namespaceInode(const std::string& link) {
  const size_t open = link.find(":[");
  if (open == std::string::npos || link.empty() || link.back() != ']') return std::nullopt;
  const std::string digits = link.substr(open + 2, link.size() - open - 3);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return std::strtoull(digits.c_str(), nullptr, 10);
}

// Inside a container /proc/1 is the container's own init, in the container's namespace; the kernel's fixed
// inode numbers for the initial namespaces tell a container apart. /proc/1 still counts where it is
// readable and differs (a host /proc mounted into the container).
bool namespaceIsolated(const PlatformRoots& roots, const char* kind, unsigned long long initInode,
                       PlatformSnapshot& snapshot) {
  const fs::path self = fs::path(roots.proc) / "self" / "ns" / kind;
  const auto selfLink = readLink(self);
  const auto inode = selfLink ? namespaceInode(*selfLink) : std::nullopt;
  if (!inode) {
    snapshot.unreadable.push_back(fmt::format("{} namespace: cannot read {}: check by hand: readlink /proc/self/ns/{}",
                                              kind, self.string(), kind));
    return false;
  }
  const auto init = readLink(fs::path(roots.proc) / "1" / "ns" / kind);
  return *inode != initInode || (init && *init != *selfLink);
}

void readDevShm(const PlatformRoots& roots, PlatformSnapshot& snapshot) {
  if (roots.devShmBytesOverride) {
    snapshot.devShmBytes = *roots.devShmBytesOverride;
    return;
  }
  const fs::path shm = fs::path(roots.dev) / "shm";
  struct statvfs info {};
  if (statvfs(shm.c_str(), &info) != 0) {
    snapshot.unreadable.push_back(
        fmt::format("/dev/shm size: statvfs({}) failed: check by hand: df -h /dev/shm", shm.string()));
    return;
  }
  snapshot.devShmBytes = static_cast<std::int64_t>(info.f_blocks) * static_cast<std::int64_t>(info.f_frsize);
}

void readPtraceScope(const PlatformRoots& roots, PlatformSnapshot& snapshot) {
  const fs::path file = fs::path(roots.proc) / "sys" / "kernel" / "yama" / "ptrace_scope";
  const auto text = readText(file, snapshot, "ptrace scope");
  const std::string value = text ? trimSpace(*text) : std::string();
  if (value.size() == 1 && value[0] >= '0' && value[0] <= '3') {
    snapshot.ptraceScope = value[0] - '0';
    return;
  }
  snapshot.unreadable.push_back(fmt::format(
      "ptrace scope: {} {} (absent without the Yama security module): check by hand: sysctl kernel.yama.ptrace_scope",
      file.string(), text ? fmt::format("holds '{}'", value) : std::string("cannot be read")));
}

}  // namespace

bool acsRedirects(std::uint16_t control) noexcept {
  return (control & (kAcsP2pRequestRedirect | kAcsP2pCompletionRedirect | kAcsP2pEgressControl)) != 0;
}

AcsReading findAcsControl(const std::string& config) {
  AcsReading reading;
  reading.bytes = config.size();
  if (config.size() < kConfigSpaceBytes) return reading;
  std::size_t offset = kExtendedConfigStart;
  // Each capability takes at least one 4-byte header, so a longer walk is a loop.
  for (std::size_t steps = 0; steps < (kConfigSpaceBytes - kExtendedConfigStart) / 4; ++steps) {
    if (offset < kExtendedConfigStart || offset + 8 > kConfigSpaceBytes) break;
    const std::uint32_t header = le32(config, offset);
    // All zeros: no extended capabilities; all ones: the device did not answer.
    if (header == 0 || header == 0xFFFFFFFFu) {
      reading.status = AcsReading::Status::NoCapability;
      return reading;
    }
    if ((header & 0xFFFFu) == kAcsCapabilityId) {
      // ACS Capability register at +4, ACS Control register at +6.
      reading.status = AcsReading::Status::Found;
      reading.control = static_cast<std::uint16_t>(le32(config, offset + 4) >> 16);
      return reading;
    }
    const std::size_t next = (header >> 20) & 0xFFCu;
    if (next == 0) {
      reading.status = AcsReading::Status::NoCapability;
      return reading;
    }
    offset = next;
  }
  reading.status = AcsReading::Status::Malformed;
  return reading;
}

std::optional<std::string> hypervisorFromDmi(const std::string& sysVendor, const std::string& productName) {
  auto has = [](const std::string& text, const char* part) { return text.find(part) != std::string::npos; };
  if (sysVendor == "QEMU") return std::string("QEMU");
  if (has(productName, "KVM")) return std::string("KVM");
  // EC2 bare-metal instances report the same vendor, with an instance type ending in ".metal".
  if (sysVendor == "Amazon EC2") {
    return has(productName, ".metal") ? std::nullopt : std::optional<std::string>("Amazon EC2");
  }
  if (sysVendor == "Google" || productName == "Google Compute Engine") return std::string("Google Compute Engine");
  if (sysVendor == "Microsoft Corporation" && productName == "Virtual Machine") return std::string("Microsoft Hyper-V");
  if (sysVendor.compare(0, 6, "VMware") == 0 || productName.compare(0, 6, "VMware") == 0) {
    return std::string("VMware");
  }
  if (sysVendor == "Xen" || has(productName, "HVM domU")) return std::string("Xen");
  if (sysVendor == "innotek GmbH" || has(productName, "VirtualBox")) return std::string("VirtualBox");
  if (sysVendor == "OpenStack Foundation" || productName == "OpenStack Nova") return std::string("OpenStack");
  if (sysVendor == "Alibaba Cloud" && has(productName, "ECS")) return std::string("Alibaba Cloud ECS");
  if (sysVendor.compare(0, 9, "Parallels") == 0) return std::string("Parallels");
  if (sysVendor == "Firecracker") return std::string("Firecracker");
  if (sysVendor == "BHYVE") return std::string("bhyve");
  return std::nullopt;
}
std::string pciVendorName(const std::string& vendorId) {
  static const std::map<std::string, std::string> kNames = {
      {"0x10b5", "PLX/Broadcom"}, {"0x1000", "Broadcom"}, {"0x1022", "AMD"},     {"0x8086", "Intel"},
      {"0x11f8", "Microchip"},    {"0x10de", "NVIDIA"},   {"0x1b21", "ASMedia"}, {"0x1d94", "Hygon"},
  };
  auto it = kNames.find(vendorId);
  return it != kNames.end() ? it->second : fmt::format("vendor {}", vendorId);
}

PlatformSnapshot readPlatformSnapshot(const Topology& topology, const PlatformRoots& roots) {
  PlatformSnapshot snapshot;
  readCommandLine(roots, snapshot);
  readIommu(topology, roots, snapshot);
  readHypervisor(roots, snapshot);
  readBridges(topology, roots, snapshot);
  readOpenFileLimit(roots, snapshot);
  snapshot.pidNamespaceIsolated = namespaceIsolated(roots, "pid", kInitPidNamespaceInode, snapshot);
  snapshot.ipcNamespaceIsolated = namespaceIsolated(roots, "ipc", kInitIpcNamespaceInode, snapshot);
  readDevShm(roots, snapshot);
  readPtraceScope(roots, snapshot);
  readProcessResources(roots, snapshot);
  return snapshot;
}

}  // namespace peerlink
