// The declaration of every PEERLINK_* parameter. Adding a knob: add it here, use it through Params, and
// document it in docs/parameters.md (`peerlink env` lists it automatically).
#include <limits>

#include "peerlink/params.hpp"

namespace peerlink {

const std::vector<ParamSpec>& paramRegistry() {
  static const std::vector<ParamSpec> registry = {
      {"PEERLINK_DEBUG",
       ParamType::Enum,
       "WARN",
       {"WARN", "INFO", "TRACE"},
       0,
       0,
       "How much peerlink logs to stderr: WARN (problems only), INFO (decisions), TRACE (everything)."},
      {"PEERLINK_DEBUG_SUBSYS",
       ParamType::List,
       "ALL",
       {"INIT", "TOPO", "P2P", "COLL", "DOCTOR", "BENCH"},
       0,
       0,
       "Subsystems whose INFO/TRACE lines are printed (comma-separated, or ALL); warnings always print."},
      {"PEERLINK_TOPO_FILE",
       ParamType::String,
       "",
       {},
       0,
       0,
       "Load the topology from this JSON file (written by `peerlink topo --json`) instead of discovering it."},
      {"PEERLINK_NVML",
       ParamType::Bool,
       "1",
       {},
       0,
       0,
       "Load NVML (libnvidia-ml.so.1) at run time for NVLink, NUMA and driver details; 0 to skip it."},
      {"PEERLINK_SYSFS_ROOT",
       ParamType::String,
       "/sys",
       {},
       0,
       0,
       "Root of the sysfs tree discovery reads PCI paths, NUMA nodes and PCIe links from (tests point it at fake "
       "trees)."},
  };
  return registry;
}

}  // namespace peerlink
