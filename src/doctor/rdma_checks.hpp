// GPUDirect RDMA readiness decided from plain data: the topology and an RdmaSnapshot in, the GPU-NIC path
// classes, each GPU's nearest NICs and findings (stable code, severity, summary, fix) out. Pure functions;
// tests/cpu/test_platform_rdma.cc runs them on the fixture trees and on snapshots built in the test.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "peerlink/rdma_readiness.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// Everything RdmaReadiness holds, from what was read. docs/doctor.md lists every code.
RdmaReadiness decideRdmaReadiness(const Topology& topology, RdmaSnapshot snapshot);

/// Whether the NICs can register GPU memory, and how; the findings that say why not.
struct MemoryRegistration {
  std::optional<bool> usable;  ///< nullopt: unknown
  std::string how;             ///< one line: "nvidia_peermem is loaded", "DMA-BUF (...)", or why not
  std::vector<Finding> findings;
};

/// nvidia_peermem, or DMA-BUF where peermem is not loaded. DMA-BUF needs Linux 5.12 or later (the RDMA
/// core's DMA-BUF import), a kernel built with CONFIG_INFINIBAND_USER_MEM and CONFIG_DMA_SHARED_BUFFER, the
/// open NVIDIA kernel modules, and CUDA saying CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED for the GPUs; a known
/// failure of any makes it unusable, and it is usable only when the kernel and CUDA both said yes.
MemoryRegistration decideMemoryRegistration(const RdmaSnapshot& snapshot);

}  // namespace peerlink
