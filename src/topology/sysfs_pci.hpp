// Reads what the Linux PCI tree in sysfs says about one device: its path from the root complex, NUMA
// node, local CPUs and PCIe link. The root is a parameter (PEERLINK_SYSFS_ROOT) so tests read fake trees
// under tests/fixtures/sysfs/.
#pragma once

#include <string>
#include <vector>

#include "peerlink/topology.hpp"

namespace peerlink {

/// What sysfs tells about one PCI device. Missing pieces stay at their "unknown" values and are
/// explained in `problems`.
struct SysfsPciDevice {
  std::string busId;   ///< normalized "dddd:bb:dd.f", lower case
  bool found = false;  ///< <root>/bus/pci/devices/<busId> exists
  /// From the host bridge down to the device itself, e.g.
  /// {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:08.0", "0000:03:00.0"}.
  std::vector<std::string> path;
  int numaNode = -1;                  ///< numa_node; -1 when absent or "-1"
  std::string cpuList;                ///< local_cpulist, e.g. "0-31,64-95"
  PcieLink link;                      ///< current_/max_link_speed and _width
  std::vector<std::string> problems;  ///< one line per thing that could not be read
  /// The readings that failed for a reason other than the file's absence (no descriptor left, no memory, no
  /// permission): numa, pcieLink, pciPath (Gpu::failed).
  FailedReadings failed;
};

/// Normalizes a PCI bus id as CUDA ("0000:00:06.0"), NVML ("00000000:00:06.0") or users write it to
/// "dddd:bb:dd.f" lower case. Throws Error(InvalidInput) when it is not a bus id.
std::string normalizePciBusId(const std::string& busId);

/// Reads <sysfsRoot>/bus/pci/devices/<busId> and what its real path says. Never throws for missing
/// files: a VM or container may hide them; `found` and `problems` say what was missing.
SysfsPciDevice readSysfsPciDevice(const std::string& sysfsRoot, const std::string& busId);

/// PCIe generation from a sysfs link speed such as "16.0 GT/s PCIe" or "32.0 GT/s"; 0 when unknown.
int pcieGenFromSpeed(const std::string& speed);

}  // namespace peerlink
