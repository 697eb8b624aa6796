// Path classification between two GPUs: pure functions from PCI paths, NUMA nodes and NVLink counts to
// NCCL's path classes (include/peerlink/topology.hpp, PathClass).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "peerlink/topology.hpp"

namespace peerlink {

/// The PCIe-only class between two devices from their sysfs paths (SysfsPciDevice::path: host bridge
/// first, the device itself last) and NUMA nodes: PIX, PXB, PHB, NODE or SYS; nullopt when either path
/// is empty (unknown).
///
/// As in NCCL, a PCIe switch shows in sysfs as an upstream port with its downstream ports below it,
/// so the bridges between a device and the root are taken two levels at a time as one switch.
/// Through one switch is PIX, through several without reaching the root complex is PXB, through one
/// root complex is PHB, through two root complexes of one NUMA node is NODE, across NUMA nodes (or
/// where the NUMA nodes are unknown) is SYS.
std::optional<PathClass> classifyPciPath(const std::vector<std::string>& pathA, int numaA,
                                         const std::vector<std::string>& pathB, int numaB);

/// Fills GpuPair::path for every pair of the topology: NVL where the pair has NVLinks, NVB where both
/// have NVLinks to a common third GPU, else the PCIe class (SYS, with a note, where unknown).
void classifyPaths(Topology& topology);

}  // namespace peerlink
