// The topology a communicator plans with, discovered once per process.
#pragma once

#include "peerlink/params.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// What discoverTopology(params) finds, discovered once per process for each setting that shapes it
/// (PEERLINK_NVML, PEERLINK_SYSFS_ROOT) and kept: a process's GPUs, their links and PCIe paths stay as they
/// are while it runs, and NVML alone took 57-67 ms of each discovery (4x H100). A topology file
/// (PEERLINK_TOPO_FILE) is read again each time. Thread-safe; two threads that miss at once both discover.
Topology discoveredTopology(const Params& params);

}  // namespace peerlink
