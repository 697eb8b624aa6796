// Topology basics: path class names, pair lookup, validation.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "peerlink/error.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {
namespace {

constexpr PathClass kAllPaths[] = {PathClass::LOC, PathClass::NVL, PathClass::NVB,  PathClass::PIX,
                                   PathClass::PXB, PathClass::PHB, PathClass::NODE, PathClass::SYS};

}  // namespace

const char* pathClassName(PathClass path) noexcept {
  switch (path) {
    case PathClass::LOC: return "LOC";
    case PathClass::NVL: return "NVL";
    case PathClass::NVB: return "NVB";
    case PathClass::PIX: return "PIX";
    case PathClass::PXB: return "PXB";
    case PathClass::PHB: return "PHB";
    case PathClass::NODE: return "NODE";
    case PathClass::SYS: return "SYS";
  }
  return "?";
}

const char* pathClassDescription(PathClass path) noexcept {
  switch (path) {
    case PathClass::LOC: return "the same GPU";
    case PathClass::NVL: return "NVLink, directly or through NVSwitch";
    case PathClass::NVB: return "NVLink through an intermediate GPU";
    case PathClass::PIX: return "PCIe through at most one PCIe switch";
    case PathClass::PXB: return "PCIe through several PCIe switches, not through the host bridge";
    case PathClass::PHB: return "PCIe through a PCIe host bridge (the CPU's root complex)";
    case PathClass::NODE: return "PCIe plus the interconnect between host bridges within a NUMA node";
    case PathClass::SYS: return "PCIe plus the interconnect between NUMA nodes (QPI/UPI/Infinity Fabric)";
  }
  return "?";
}

std::string linkLabel(const GpuPair& pair) {
  if (pair.path == PathClass::NVL && pair.nvlinks > 0) return fmt::format("NV{}", pair.nvlinks);
  return pathClassName(pair.path);
}

std::optional<PathClass> parsePathClass(const std::string& name) {
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (PathClass path : kAllPaths) {
    if (upper == pathClassName(path)) return path;
  }
  return std::nullopt;
}

const GpuPair& Topology::pair(int src, int dst) const {
  // In (src, dst) order without the diagonal, src -> dst sits at src * (n - 1) + dst, less one past it.
  const auto n = static_cast<std::int64_t>(gpus.size());
  if (src >= 0 && dst >= 0 && src < n && dst < n && src != dst) {
    const std::int64_t index = src * (n - 1) + dst - (dst > src ? 1 : 0);
    if (index < static_cast<std::int64_t>(pairs.size())) {
      const GpuPair& candidate = pairs[static_cast<std::size_t>(index)];
      if (candidate.src == src && candidate.dst == dst) return candidate;
    }
  }
  for (const GpuPair& p : pairs) {
    if (p.src == src && p.dst == dst) return p;
  }
  throw Error(ErrorCode::InvalidUsage,
              fmt::format("no GPU pair {} -> {} in the topology ({} GPUs)", src, dst, gpus.size()));
}

GpuPair& Topology::pair(int src, int dst) {
  return const_cast<GpuPair&>(static_cast<const Topology&>(*this).pair(src, dst));
}

void validateTopology(const Topology& topology) {
  const int n = static_cast<int>(topology.gpus.size());
  auto fail = [&](const std::string& what) {
    throw Error(ErrorCode::InvalidInput, fmt::format("topology from {}: {}", topology.source, what));
  };
  if (topology.schemaVersion != 1) fail(fmt::format("unsupported schema version {}", topology.schemaVersion));
  if (n == 0) fail("no GPUs (a topology has at least one)");
  if (topology.gpus.size() > static_cast<size_t>(kMaxTopologyGpus)) {
    fail(fmt::format("{} GPUs, more than the {} a topology may have", topology.gpus.size(), kMaxTopologyGpus));
  }
  std::set<std::string> uuids;
  std::set<std::string> busIds;
  for (int i = 0; i < n; ++i) {
    const Gpu& gpu = topology.gpus[static_cast<size_t>(i)];
    if (gpu.cudaOrdinal != i) fail(fmt::format("gpus[{}] has cuda_ordinal {} (must be its index)", i, gpu.cudaOrdinal));
    if (gpu.uuid.empty()) fail(fmt::format("gpus[{}] has no uuid", i));
    if (gpu.pciBusId.empty()) fail(fmt::format("gpus[{}] has no pci_bus_id", i));
    if (!uuids.insert(gpu.uuid).second) fail(fmt::format("uuid {} appears twice", gpu.uuid));
    if (!busIds.insert(gpu.pciBusId).second) fail(fmt::format("pci_bus_id {} appears twice", gpu.pciBusId));
  }
  std::set<std::pair<int, int>> seen;
  for (const GpuPair& p : topology.pairs) {
    if (p.src < 0 || p.src >= n || p.dst < 0 || p.dst >= n) {
      fail(fmt::format("pair {} -> {} names a GPU outside 0..{}", p.src, p.dst, n - 1));
    }
    if (p.src == p.dst) fail(fmt::format("pair {} -> {} joins a GPU to itself", p.src, p.dst));
    if (!seen.insert({p.src, p.dst}).second) fail(fmt::format("pair {} -> {} appears twice", p.src, p.dst));
    if (p.nvlinks < 0) fail(fmt::format("pair {} -> {} has a negative NVLink count", p.src, p.dst));
    if (p.expectedGBps < 0) fail(fmt::format("pair {} -> {} has a negative expected bandwidth", p.src, p.dst));
  }
  const size_t expected = static_cast<size_t>(n) * static_cast<size_t>(n > 0 ? n - 1 : 0);
  if (topology.pairs.size() != expected) {
    fail(fmt::format("{} pairs for {} GPUs (every ordered pair must appear once: {})", topology.pairs.size(), n,
                     expected));
  }
}

}  // namespace peerlink
