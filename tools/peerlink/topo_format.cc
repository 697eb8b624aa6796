#include "topo_format.hpp"

#include <fmt/format.h>

#include "core/text.hpp"
#include "matrix_format.hpp"

namespace peerlink::cli {
namespace {

std::string orUnknown(const std::string& text) {
  return text.empty() ? "?" : text;
}

std::string versionText(int version) {
  return version > 0 ? fmt::format("{}.{}", version / 1000, (version % 1000) / 10) : "?";
}

std::string pcieText(const PcieLink& link) {
  if (link.gen <= 0 || link.width <= 0) return "?";
  std::string text = fmt::format("Gen{} x{}", link.gen, link.width);
  if ((link.maxGen > 0 && link.maxGen != link.gen) || (link.maxWidth > 0 && link.maxWidth != link.width)) {
    text += fmt::format(" (max Gen{} x{})", link.maxGen, link.maxWidth);
  }
  return text;
}

std::string nvlinkText(const NvlinkInfo& nvlink) {
  if (nvlink.activeLinks == 0) return "-";
  std::string text = fmt::format("{} x v{}", nvlink.activeLinks, nvlink.version);
  if (nvlink.switchLinks > 0) text += fmt::format(" ({} to NVSwitch)", nvlink.switchLinks);
  return text;
}

std::string p2pCell(const GpuPair& pair) {
  if (!pair.canAccessPeer) return "--";
  std::string text = "OK";
  if (pair.p2p.nativeAtomics) text += " A";
  if (pair.p2p.performanceRank >= 0) text += fmt::format(" r{}", pair.p2p.performanceRank);
  return text;
}

std::string gpuTable(const Topology& topology) {
  std::vector<std::vector<std::string>> rows;
  for (const Gpu& gpu : topology.gpus) {
    rows.push_back({fmt::format("{}", gpu.cudaOrdinal), gpu.nvmlIndex >= 0 ? fmt::format("{}", gpu.nvmlIndex) : "?",
                    gpu.name, gpu.pciBusId, fmt::format("{}.{}", gpu.ccMajor, gpu.ccMinor),
                    fmt::format("{}", gpu.smCount),
                    fmt::format("{:.1f} GiB", static_cast<double>(gpu.memoryBytes) / (1024.0 * 1024 * 1024)),
                    gpu.numaNode >= 0 ? fmt::format("{}", gpu.numaNode) : "-1", orUnknown(gpu.cpuAffinity),
                    pcieText(gpu.pcie), nvlinkText(gpu.nvlink), gpu.uuid});
  }
  return formatTable(
      {"GPU", "SMI", "Name", "PCI bus id", "CC", "SMs", "Memory", "NUMA", "CPU affinity", "PCIe", "NVLink", "UUID"},
      rows);
}

}  // namespace

std::string formatTopologyText(const Topology& topology) {
  const int n = static_cast<int>(topology.gpus.size());
  std::string out = fmt::format("peerlink topo: {} GPU{} on {} ({}); driver {}, CUDA driver {}, runtime {}\n\n", n,
                                n == 1 ? "" : "s", printable(orUnknown(topology.host)), printable(topology.source),
                                printable(orUnknown(topology.driverVersion)), versionText(topology.cudaDriverVersion),
                                versionText(topology.cudaRuntimeVersion));
  out += gpuTable(topology);

  Matrix links{"\nLinks  GPU(row) -> GPU(column)",
               n,
               [&](int row, int column) { return linkLabel(topology.pair(row, column)); },
               {"CPU Affinity", "NUMA Affinity"},
               [&](int row) {
                 const Gpu& gpu = topology.gpus[static_cast<size_t>(row)];
                 return std::vector<std::string>{orUnknown(gpu.cpuAffinity),
                                                 gpu.numaNode >= 0 ? fmt::format("{}", gpu.numaNode) : "N/A"};
               }};
  out += formatMatrix(links);

  Matrix p2p{
      "\nP2P access  GPU(row) -> GPU(column)  (OK: row may map column's memory; A: native atomics; "
      "rN: CUDA performance rank; --: no peer access)",
      n,
      [&](int row, int column) { return p2pCell(topology.pair(row, column)); },
      {},
      nullptr};
  out += formatMatrix(p2p);

  Matrix bandwidth{
      "\nExpected bandwidth GB/s per direction  GPU(row) -> GPU(column)  (link model, not a measurement; "
      "- = unknown or no P2P)",
      n,
      [&](int row, int column) {
        const GpuPair& pair = topology.pair(row, column);
        return pair.expectedGBps > 0 ? fmt::format("{:.1f}", pair.expectedGBps) : std::string("-");
      },
      {},
      nullptr};
  out += formatMatrix(bandwidth);

  out += "\nLegend:\n  X    = self\n  NV#  = a bonded set of # NVLinks (directly or through NVSwitch)\n";
  for (PathClass path :
       {PathClass::NVB, PathClass::PIX, PathClass::PXB, PathClass::PHB, PathClass::NODE, PathClass::SYS}) {
    out += fmt::format("  {:<4} = {}\n", pathClassName(path), pathClassDescription(path));
  }
  if (!topology.notes.empty()) {
    out += "\nNotes (what could not be learned):\n";
    for (const std::string& note : topology.notes) out += "  - " + printable(note, note.size()) + "\n";
  }
  const std::vector<std::string> warnings = orderingWarnings(topology);
  if (!warnings.empty()) {
    out += "\nWarnings:\n";
    for (const std::string& warning : warnings) out += "  - " + warning + "\n";
  }
  return out;
}

}  // namespace peerlink::cli
