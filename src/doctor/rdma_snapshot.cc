// Reading the RDMA facts of a (real or fake) machine.
#include "doctor/rdma_snapshot.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "core/text.hpp"
#include "doctor/platform_checks.hpp"
#include "doctor/platform_snapshot.hpp"
#include "doctor/sysfs_text.hpp"
#include "peerlink/error.hpp"
#include "topology/path_class.hpp"
#include "topology/sysfs_pci.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;

// linux/capability.h: CAP_IPC_LOCK lets a process lock memory past RLIMIT_MEMLOCK.
constexpr int kCapIpcLock = 14;
// The module nvidia_peermem replaced (Mellanox's nv_peer_mem, before driver R470); either serves.
constexpr const char* kPeermemModules[] = {"nvidia_peermem", "nv_peer_mem"};

// A one-line attribute, made safe to print (the text comes from outside: a fake tree, a driver).
std::string readTrimmed(const fs::path& file) {
  return printable(trimSpace(readSysText(file).value_or("")), 200);
}

// The entries of a directory, sorted by name; empty when it cannot be listed.
std::vector<std::string> entryNames(const fs::path& directory) {
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool isNumber(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<RdmaPort> readPorts(const fs::path& nicDir) {
  std::vector<std::string> numbers;
  for (const std::string& name : entryNames(nicDir / "ports")) {
    if (isNumber(name)) numbers.push_back(name);
  }
  std::sort(numbers.begin(), numbers.end(),
            [](const std::string& a, const std::string& b) { return std::stoi(a) < std::stoi(b); });
  std::vector<RdmaPort> ports;
  for (const std::string& number : numbers) {
    const fs::path dir = nicDir / "ports" / number;
    RdmaPort port;
    port.number = std::stoi(number);
    port.state = sysfsEnumName(readTrimmed(dir / "state"));
    port.physicalState = sysfsEnumName(readTrimmed(dir / "phys_state"));
    port.linkLayer = readTrimmed(dir / "link_layer");
    port.rate = readTrimmed(dir / "rate");
    port.gbps = rateGbps(port.rate);
    ports.push_back(port);
  }
  return ports;
}

std::vector<RdmaNetdev> readNetdevs(const fs::path& deviceDir) {
  std::vector<RdmaNetdev> netdevs;
  for (const std::string& name : entryNames(deviceDir / "net")) {
    RdmaNetdev netdev;
    netdev.name = printable(name, 100);
    netdev.operstate = readTrimmed(deviceDir / "net" / name / "operstate");
    const std::string speed = readTrimmed(deviceDir / "net" / name / "speed");
    // The kernel reports -1 (or reading fails) when the speed is unknown or the link is down.
    if (isNumber(speed)) netdev.speedMbps = std::strtol(speed.c_str(), nullptr, 10);
    netdevs.push_back(netdev);
  }
  return netdevs;
}

// Fills the PCI facts of a NIC whose class entry links to a PCI device; leaves a software device alone.
void readNicDevice(const RdmaReadinessOptions& options, const fs::path& nicDir, RdmaNic& nic, RdmaSnapshot& snapshot) {
  std::error_code error;
  const fs::path device = fs::canonical(nicDir / "device", error);
  std::string busId;
  if (!error) {
    try {
      busId = normalizePciBusId(device.filename().string());
    } catch (const Error&) {
      busId.clear();  // a device that is not a PCI function: software RDMA
    }
  }
  if (busId.empty()) {
    nic.parent = readTrimmed(nicDir / "parent");
    return;
  }
  nic.pciBusId = busId;
  nic.netdevs = readNetdevs(device);
  const SysfsPciDevice pci = readSysfsPciDevice(options.sysRoot, busId);
  nic.numaNode = pci.numaNode;
  nic.pciPath = pci.path;
  if (pci.path.empty()) {
    snapshot.unreadable.push_back(
        fmt::format("PCI path of RDMA NIC {} ({}): {}: check by hand: readlink -f "
                    "/sys/bus/pci/devices/{}",
                    nic.name, busId, pci.problems.empty() ? "unknown" : pci.problems[0], busId));
  }
}

void readVerbs(const RdmaReadinessOptions& options, RdmaSnapshot& snapshot) {
  const fs::path verbsClass = fs::path(options.sysRoot) / "class" / "infiniband_verbs";
  std::map<std::string, std::string> byNic;
  for (const std::string& name : entryNames(verbsClass)) {
    const std::string nic = readTrimmed(verbsClass / name / "ibdev");
    if (!nic.empty()) byNic[nic] = name;
  }
  for (RdmaNic& nic : snapshot.nics) {
    const auto found = byNic.find(nic.name);
    if (found == byNic.end()) continue;
    nic.verbsDevice = found->second;
    nic.verbsNodePresent = sysPathExists(fs::path(options.devRoot) / "infiniband" / found->second);
  }
}

void readNics(const RdmaReadinessOptions& options, RdmaSnapshot& snapshot) {
  const fs::path classDir = fs::path(options.sysRoot) / "class" / "infiniband";
  snapshot.classDirectory = classDir.string();
  std::error_code error;
  snapshot.classPresent = fs::is_directory(classDir, error);
  for (const std::string& name : entryNames(classDir)) {
    RdmaNic nic;
    nic.name = printable(name, 100);
    readNicDevice(options, classDir / name, nic, snapshot);
    nic.ports = readPorts(classDir / name);
    snapshot.nics.push_back(std::move(nic));
  }
  readVerbs(options, snapshot);
}

void readModules(const RdmaReadinessOptions& options, RdmaSnapshot& snapshot) {
  const fs::path procModules = fs::path(options.procRoot) / "modules";
  const fs::path sysModules = fs::path(options.sysRoot) / "module";
  const std::optional<std::string> listed = readSysText(procModules);
  std::error_code error;
  if (!listed && !fs::is_directory(sysModules, error)) {
    snapshot.unreadable.push_back(
        fmt::format("loaded kernel modules: cannot read {} nor list {}: check by hand: "
                    "lsmod | grep -E 'nvidia_peermem|nv_peer_mem'",
                    procModules.string(), sysModules.string()));
    return;
  }
  snapshot.peermemLoaded = false;
  for (const char* module : kPeermemModules) {
    // /sys/module/<name> exists for every loaded module (nvidia_peermem is never built into the kernel).
    if (listed ? moduleListed(*listed, module) : sysPathExists(sysModules / module)) {
      snapshot.peermemLoaded = true;
      snapshot.peermemModule = module;
      return;
    }
  }
}

void readKernel(const RdmaReadinessOptions& options, RdmaSnapshot& snapshot) {
  const fs::path release = fs::path(options.procRoot) / "sys" / "kernel" / "osrelease";
  snapshot.kernelRelease = readTrimmed(release);
  if (snapshot.kernelRelease.empty()) {
    snapshot.unreadable.push_back(
        fmt::format("kernel release: cannot read {}: check by hand: uname -r", release.string()));
    return;
  }
  const fs::path config = fs::path(options.bootRoot) / ("config-" + snapshot.kernelRelease);
  const std::optional<std::string> text = readSysText(config);
  if (!text) {
    snapshot.unreadable.push_back(
        fmt::format("kernel configuration: cannot read {} (/proc/config.gz is not read): check by hand: grep -E "
                    "'CONFIG_(DMA_SHARED_BUFFER|INFINIBAND_USER_MEM)=' /boot/config-$(uname -r), or zgrep the same in "
                    "/proc/config.gz",
                    config.string()));
    return;
  }
  snapshot.kernelConfigFile = config.string();
  snapshot.configDmaSharedBuffer = kernelConfigEnabled(*text, "CONFIG_DMA_SHARED_BUFFER");
  snapshot.configInfinibandUserMem = kernelConfigEnabled(*text, "CONFIG_INFINIBAND_USER_MEM");
}

void readNvidiaDriver(const RdmaReadinessOptions& options, RdmaSnapshot& snapshot) {
  const fs::path file = fs::path(options.procRoot) / "driver" / "nvidia" / "version";
  const std::optional<std::string> text = readSysText(file);
  if (text) snapshot.nvidiaOpenModules = nvidiaOpenModules(*text, snapshot.nvidiaDriverVersion);
  if (snapshot.nvidiaOpenModules) return;
  snapshot.unreadable.push_back(
      fmt::format("NVIDIA kernel module flavour: {} (no NVIDIA driver loaded, or a container that hides it): "
                  "check by hand: modinfo nvidia | grep license (Dual MIT/GPL: the open modules)",
                  text ? fmt::format("{} names neither the open nor the proprietary module", file.string())
                       : fmt::format("cannot read {}", file.string())));
}

// The bridges where a GPU's and a NIC's paths part below one host bridge: the only ports whose ACS control
// decides where GPUDirect RDMA goes (rdma_checks.cc, checkAcs).
void readBridges(const Topology& topology, const RdmaReadinessOptions& options, RdmaSnapshot& snapshot) {
  std::vector<std::string> busIds;
  for (const Gpu& gpu : topology.gpus) {
    for (const RdmaNic& nic : snapshot.nics) {
      const auto path = classifyPciPath(gpu.pciPath, gpu.numaNode, nic.pciPath, nic.numaNode);
      if (!path || *path > PathClass::PHB) continue;
      for (const std::string& id : divergenceBridges(gpu.pciPath, nic.pciPath)) {
        if (std::find(busIds.begin(), busIds.end(), id) == busIds.end()) busIds.push_back(id);
      }
    }
  }
  PlatformRoots roots;
  roots.sys = options.sysRoot;
  PlatformSnapshot scratch;
  for (const std::string& id : busIds) snapshot.bridges.push_back(readBridge(roots, id, scratch));
  snapshot.unreadable.insert(snapshot.unreadable.end(), scratch.unreadable.begin(), scratch.unreadable.end());
}

void readMemlock(const RdmaReadinessOptions& options, RdmaSnapshot& snapshot) {
  const fs::path limits = fs::path(options.procRoot) / "self" / "limits";
  if (const auto text = readSysText(limits)) snapshot.memlockBytes = memlockFromLimits(*text);
  if (!snapshot.memlockBytes) {
    snapshot.unreadable.push_back(
        fmt::format("locked-memory limit: no 'Max locked memory' in {}: check by hand: ulimit -l", limits.string()));
  }
  if (const auto status = readSysText(fs::path(options.procRoot) / "self" / "status")) {
    snapshot.ipcLockCapability = effectiveCapability(*status, kCapIpcLock);
  }
}

}  // namespace

std::string sysfsEnumName(const std::string& text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos || !isNumber(trimSpace(text.substr(0, colon)))) return trimSpace(text);
  return trimSpace(text.substr(colon + 1));
}

double rateGbps(const std::string& rate) {
  const char* begin = rate.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  return end == begin || value < 0 ? 0 : value;
}

std::optional<std::pair<int, int>> kernelVersion(const std::string& release) {
  int major = 0;
  int minor = 0;
  char dot = 0;
  std::istringstream in(release);
  if (!(in >> major >> dot >> minor) || dot != '.' || major <= 0 || minor < 0) return std::nullopt;
  return std::make_pair(major, minor);
}

bool kernelConfigEnabled(const std::string& config, const std::string& name) {
  std::istringstream lines(config);
  std::string line;
  while (std::getline(lines, line)) {
    line = trimSpace(line);
    if (line.compare(0, name.size() + 1, name + "=") == 0) {
      const std::string value = line.substr(name.size() + 1);
      return value == "y" || value == "m";
    }
  }
  return false;
}

std::optional<bool> nvidiaOpenModules(const std::string& versionText, std::string& version) {
  const std::string firstLine = versionText.substr(0, versionText.find('\n'));
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  560.35.03  Release Build  (...)"
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023"
  const std::size_t module = firstLine.find("Kernel Module");
  if (firstLine.find("NVIDIA UNIX") == std::string::npos || module == std::string::npos) return std::nullopt;
  std::istringstream rest(firstLine.substr(module + 13));
  std::string word;
  while (rest >> word) {
    if (!word.empty() && std::isdigit(static_cast<unsigned char>(word[0])) && word.find('.') != std::string::npos) {
      version = word;
      break;
    }
  }
  return firstLine.find("Open Kernel Module") != std::string::npos;
}

bool moduleListed(const std::string& procModules, const std::string& name) {
  std::istringstream lines(procModules);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.compare(0, name.size() + 1, name + " ") == 0) return true;
  }
  return false;
}

std::optional<std::uint64_t> memlockFromLimits(const std::string& limits) {
  std::istringstream lines(limits);
  std::string line;
  const std::string key = "Max locked memory";
  while (std::getline(lines, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    std::istringstream fields(line.substr(key.size()));
    std::string soft;
    fields >> soft;
    if (soft == "unlimited") return std::numeric_limits<std::uint64_t>::max();
    if (!isNumber(soft)) return std::nullopt;
    return std::strtoull(soft.c_str(), nullptr, 10);
  }
  return std::nullopt;
}

std::optional<bool> effectiveCapability(const std::string& status, int bit) {
  std::istringstream lines(status);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.compare(0, 7, "CapEff:") != 0) continue;
    const std::string hex = trimSpace(line.substr(7));
    if (hex.empty() || hex.size() > 16 || !std::all_of(hex.begin(), hex.end(), [](char c) {
          return std::isxdigit(static_cast<unsigned char>(c)) != 0;
        })) {
      return std::nullopt;
    }
    return ((std::strtoull(hex.c_str(), nullptr, 16) >> bit) & 1ULL) != 0;
  }
  return std::nullopt;
}

RdmaSnapshot readRdmaSnapshot(const Topology& topology, const RdmaReadinessOptions& options) {
  RdmaSnapshot snapshot;
  readNics(options, snapshot);
  const bool hardware =
      std::any_of(snapshot.nics.begin(), snapshot.nics.end(), [](const RdmaNic& nic) { return !nic.pciBusId.empty(); });
  // Without a NIC that can reach GPU memory the rest answers nothing: it is not read, so a machine
  // without NICs reports one line and no unreadable files.
  if (!hardware) return snapshot;
  readModules(options, snapshot);
  readKernel(options, snapshot);
  readNvidiaDriver(options, snapshot);
  readBridges(topology, options, snapshot);
  readMemlock(options, snapshot);
  return snapshot;
}

}  // namespace peerlink
