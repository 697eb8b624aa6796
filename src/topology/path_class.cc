// NCCL's path classes from PCI paths, NUMA nodes and NVLink counts.
#include "topology/path_class.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink {
namespace {

// The PCIe switches above a device, nearest first, each named by its upstream port.
//
// A switch appears in sysfs as an upstream port with the downstream ports below it, so the bridges
// between the host bridge (path[0]) and the device (path.back()) are taken two at a time from the
// bottom, as NCCL's xml.cc does: the bridge right above the device is a downstream port and the one
// above that is its switch's upstream port. A single bridge left at the top is a root port, which is
// part of the root complex.
std::vector<std::string> switchesAbove(const std::vector<std::string>& path) {
  std::vector<std::string> switches;
  for (int upstream = static_cast<int>(path.size()) - 3; upstream >= 1; upstream -= 2) {
    switches.push_back(path[static_cast<size_t>(upstream)]);
  }
  return switches;
}

}  // namespace

std::optional<PathClass> classifyPciPath(const std::vector<std::string>& pathA, int numaA,
                                         const std::vector<std::string>& pathB, int numaB) {
  if (pathA.empty() || pathB.empty()) return std::nullopt;
  if (pathA.front() != pathB.front()) {
    return (numaA >= 0 && numaA == numaB) ? PathClass::NODE : PathClass::SYS;
  }
  if (pathA.back() == pathB.back()) return PathClass::LOC;

  const std::vector<std::string> switchesA = switchesAbove(pathA);
  const std::vector<std::string> switchesB = switchesAbove(pathB);
  for (size_t a = 0; a < switchesA.size(); ++a) {
    const auto common = std::find(switchesB.begin(), switchesB.end(), switchesA[a]);
    if (common == switchesB.end()) continue;
    const size_t crossed = a + static_cast<size_t>(common - switchesB.begin()) + 1;
    return crossed <= 1 ? PathClass::PIX : PathClass::PXB;
  }
  return PathClass::PHB;
}

void classifyPaths(Topology& topology) {
  const int n = static_cast<int>(topology.gpus.size());
  std::vector<std::vector<int>> nvlinks(static_cast<size_t>(n), std::vector<int>(static_cast<size_t>(n), 0));
  for (const GpuPair& pair : topology.pairs) {
    if (pair.src < 0 || pair.src >= n || pair.dst < 0 || pair.dst >= n || pair.src == pair.dst) {
      throw Error(
          ErrorCode::InvalidInput,
          fmt::format("GPU pair {} -> {} does not name two GPUs of the {} in the topology", pair.src, pair.dst, n));
    }
    nvlinks[static_cast<size_t>(pair.src)][static_cast<size_t>(pair.dst)] = pair.nvlinks;
  }
  auto hasNvlink = [&](int a, int b) { return nvlinks[static_cast<size_t>(a)][static_cast<size_t>(b)] > 0; };

  std::vector<std::pair<int, int>> unknown;
  for (GpuPair& pair : topology.pairs) {
    if (hasNvlink(pair.src, pair.dst)) {
      pair.path = PathClass::NVL;
      continue;
    }
    bool viaGpu = false;
    for (int k = 0; k < n && !viaGpu; ++k) {
      viaGpu = k != pair.src && k != pair.dst && hasNvlink(pair.src, k) && hasNvlink(k, pair.dst);
    }
    if (viaGpu) {
      pair.path = PathClass::NVB;
      continue;
    }
    const Gpu& src = topology.gpus[static_cast<size_t>(pair.src)];
    const Gpu& dst = topology.gpus[static_cast<size_t>(pair.dst)];
    const auto pci = classifyPciPath(src.pciPath, src.numaNode, dst.pciPath, dst.numaNode);
    pair.path = pci.value_or(PathClass::SYS);
    if (!pci) unknown.emplace_back(std::min(pair.src, pair.dst), std::max(pair.src, pair.dst));
  }
  if (unknown.empty()) return;

  std::sort(unknown.begin(), unknown.end());
  unknown.erase(std::unique(unknown.begin(), unknown.end()), unknown.end());
  std::string pairs;
  for (const auto& [a, b] : unknown) pairs += fmt::format("{}{}-{}", pairs.empty() ? "" : ", ", a, b);
  const std::string note =
      fmt::format("PCIe path unknown (no sysfs PCI path) between GPUs {}: classified as SYS, the worst case", pairs);
  if (std::find(topology.notes.begin(), topology.notes.end(), note) == topology.notes.end()) {
    topology.notes.push_back(note);
  }
}

}  // namespace peerlink
