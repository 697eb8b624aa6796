// Reading one PCI device from a (real or fake) sysfs tree.
#include "topology/sysfs_pci.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "core/system_file.hpp"
#include "core/text.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;

// Parses 1..maxDigits hex digits at text[pos...] up to `end` (exclusive); nullopt when not hex.
std::optional<unsigned long> parseHex(const std::string& text, size_t begin, size_t end, size_t maxDigits) {
  if (end <= begin || end - begin > maxDigits) return std::nullopt;
  unsigned long value = 0;
  for (size_t i = begin; i < end; ++i) {
    const int c = std::tolower(static_cast<unsigned char>(text[i]));
    int digit = 0;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else {
      return std::nullopt;
    }
    value = value * 16 + static_cast<unsigned long>(digit);
  }
  return value;
}

// "pci0000:00", "pci10000:e0": the directory the kernel creates for a PCI host bridge (root bus).
bool isHostBridgeName(const std::string& name) {
  if (name.size() < 6 || name.compare(0, 3, "pci") != 0) return false;
  const size_t colon = name.find(':', 3);
  if (colon == std::string::npos) return false;
  return parseHex(name, 3, colon, 8).has_value() && parseHex(name, colon + 1, name.size(), 2).has_value();
}

// Reads a one-line sysfs attribute; nullopt (and one problem line) when it is missing or unreadable. A
// failure other than the file's absence is also kept in `failure` (the first one): the value is then unknown
// because of this process, not because the machine does not say.
std::optional<std::string> readAttribute(const fs::path& dir, const char* name, SysfsPciDevice& device,
                                         std::string& failure) {
  const fs::path file = dir / name;
  int error = 0;
  const std::optional<std::string> text = readSystemFile(file.string(), &error, 4096);
  if (!text) {
    device.problems.push_back(fmt::format("{}: {}", device.busId, systemFileFailure(file.string(), error)));
    if (error != ENOENT && failure.empty()) failure = systemFileFailure(file.string(), error);
    return std::nullopt;
  }
  return trimSpace(*text);
}

std::optional<int> parseInt(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || value < -1000000 || value > 1000000) return std::nullopt;
  return static_cast<int>(value);
}

void readNuma(const fs::path& dir, SysfsPciDevice& device) {
  const auto text = readAttribute(dir, "numa_node", device, device.failed.numa);
  if (!text) return;
  const auto value = parseInt(*text);
  if (!value || *value < -1) {
    device.problems.push_back(fmt::format("{}: numa_node is '{}', not a NUMA node number", device.busId, *text));
    return;
  }
  device.numaNode = *value;
}

int readLinkSpeed(const fs::path& dir, const char* name, SysfsPciDevice& device) {
  const auto text = readAttribute(dir, name, device, device.failed.pcieLink);
  if (!text) return 0;
  const int gen = pcieGenFromSpeed(*text);
  if (gen == 0) {
    device.problems.push_back(fmt::format("{}: {} is '{}', not a known PCIe speed", device.busId, name, *text));
  }
  return gen;
}

int readLinkWidth(const fs::path& dir, const char* name, SysfsPciDevice& device) {
  const auto text = readAttribute(dir, name, device, device.failed.pcieLink);
  if (!text) return 0;
  // The kernel writes the bare lane count; "x16" is accepted as people write it.
  const std::string digits = (!text->empty() && (*text)[0] == 'x') ? text->substr(1) : *text;
  const auto value = parseInt(digits);
  if (!value || *value <= 0 || *value > 32) {
    device.problems.push_back(fmt::format("{}: {} is '{}', not a lane count", device.busId, name, *text));
    return 0;
  }
  return *value;
}

// The components of `target` after `devicesDir`, starting at the host bridge; empty (with a problem) when
// the device does not sit below a PCI host bridge there.
std::vector<std::string> pathFromHostBridge(const fs::path& devicesDir, const fs::path& target,
                                            SysfsPciDevice& device) {
  const fs::path relative = target.lexically_relative(devicesDir);
  std::vector<std::string> components;
  for (const fs::path& part : relative) components.push_back(part.string());
  if (relative.empty() || components.front() == "..") {
    device.problems.push_back(
        fmt::format("{}: {} is not below {}", device.busId, target.string(), devicesDir.string()));
    return {};
  }
  // Hyper-V and some other platforms put ACPI/VMBus directories above the host bridge: skip them.
  size_t hostBridge = 0;
  while (hostBridge < components.size() && !isHostBridgeName(components[hostBridge])) ++hostBridge;
  if (hostBridge + 1 >= components.size()) {
    device.problems.push_back(fmt::format("{}: no PCI host bridge (pciDDDD:BB) in {}", device.busId, target.string()));
    return {};
  }
  if (components.back() != device.busId) {
    device.problems.push_back(
        fmt::format("{}: sysfs link resolves to {}, a different device", device.busId, target.string()));
    return {};
  }
  return std::vector<std::string>(components.begin() + static_cast<std::ptrdiff_t>(hostBridge), components.end());
}

}  // namespace

std::string normalizePciBusId(const std::string& busId) {
  auto fail = [&]() -> std::string {
    throw Error(ErrorCode::InvalidInput,
                fmt::format("'{}' is not a PCI bus id (expected [domain:]bus:device.function in hex, e.g. "
                            "0000:3b:00.0)",
                            busId));
  };
  const size_t dot = busId.rfind('.');
  if (dot == std::string::npos) return fail();
  const size_t lastColon = busId.rfind(':', dot);
  if (lastColon == std::string::npos) return fail();
  const size_t firstColon = busId.rfind(':', lastColon == 0 ? 0 : lastColon - 1);
  const bool hasDomain = lastColon > 0 && firstColon != std::string::npos && firstColon < lastColon;
  const size_t busBegin = hasDomain ? firstColon + 1 : 0;

  std::optional<unsigned long> domain = 0UL;
  if (hasDomain) {
    // CUDA writes 4 digits, NVML 8; Linux writes at least 4 (VMD domains such as 10000 take 5).
    domain = parseHex(busId, 0, firstColon, 8);
  }
  const auto bus = parseHex(busId, busBegin, lastColon, 2);
  const auto dev = parseHex(busId, lastColon + 1, dot, 2);
  const auto function = parseHex(busId, dot + 1, busId.size(), 1);
  if (!domain || !bus || !dev || !function || *dev > 0x1f || *function > 7) return fail();
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", *domain, *bus, *dev, *function);
}

int pcieGenFromSpeed(const std::string& speed) {
  // Kernels write "8.0 GT/s PCIe" (4.17 and later) or "8 GT/s", "2.5 GT/s" (older); "Unknown" when the
  // link is down. Parsed by hand in tenths of GT/s: strtod would follow the locale's decimal point.
  const std::string text = trimSpace(speed);
  size_t pos = 0;
  int tenths = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) && tenths < 100000) {
    tenths = tenths * 10 + (text[pos++] - '0');
  }
  if (pos == 0) return 0;
  tenths *= 10;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    if (pos >= text.size() || !std::isdigit(static_cast<unsigned char>(text[pos]))) return 0;
    tenths += text[pos++] - '0';
    while (pos < text.size() && text[pos] == '0') ++pos;
  }
  if (trimSpace(text.substr(pos)).compare(0, 4, "GT/s") != 0) return 0;
  // Transfer rate per lane of PCIe generations 1..6, in tenths of GT/s.
  constexpr int kTenths[] = {25, 50, 80, 160, 320, 640};
  for (int gen = 1; gen <= 6; ++gen) {
    if (tenths == kTenths[gen - 1]) return gen;
  }
  return 0;
}

SysfsPciDevice readSysfsPciDevice(const std::string& sysfsRoot, const std::string& busId) {
  SysfsPciDevice device;
  device.busId = normalizePciBusId(busId);

  const fs::path root(sysfsRoot);
  const fs::path link = root / "bus" / "pci" / "devices" / device.busId;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(link, ec))) {
    device.problems.push_back(fmt::format("{}: {} does not exist", device.busId, link.string()));
    return device;
  }
  const fs::path target = fs::canonical(link, ec);
  if (ec) {
    const std::string failure = fmt::format("cannot resolve {}: {}", link.string(), ec.message());
    device.problems.push_back(fmt::format("{}: {}", device.busId, failure));
    if (ec != std::errc::no_such_file_or_directory) device.failed.pciPath = failure;
    return device;
  }
  device.found = true;

  const fs::path devicesDir = fs::canonical(root / "devices", ec);
  if (ec) {
    device.problems.push_back(
        fmt::format("{}: cannot resolve {}: {}", device.busId, (root / "devices").string(), ec.message()));
  } else {
    device.path = pathFromHostBridge(devicesDir, target, device);
  }

  readNuma(target, device);
  if (auto cpus = readAttribute(target, "local_cpulist", device, device.failed.numa)) device.cpuList = *cpus;
  device.link.gen = readLinkSpeed(target, "current_link_speed", device);
  device.link.width = readLinkWidth(target, "current_link_width", device);
  device.link.maxGen = readLinkSpeed(target, "max_link_speed", device);
  device.link.maxWidth = readLinkWidth(target, "max_link_width", device);
  return device;
}

}  // namespace peerlink
