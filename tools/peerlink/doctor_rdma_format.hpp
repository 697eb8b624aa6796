// `peerlink doctor`'s GPUDirect RDMA section: the NICs with their links, each GPU's nearest NIC, GPU memory
// registration, the MPI, and the findings, for people; the same as JSON for machines (docs/doctor.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "peerlink/rdma_readiness.hpp"
#include "peerlink/topology.hpp"

namespace peerlink::cli {

/// The section, starting with a blank line. Without an RDMA NIC it is one line: "GPUDirect RDMA: <summary>".
/// `inExitCode`: the command's exit code is this section's verdict (`doctor --rdma`), not the pairs'.
std::string formatRdmaText(const Topology& topology, const RdmaReadiness& readiness, bool inExitCode);

/// Every fact and conclusion of `readiness` (unknowns as null), the "rdma" object of the doctor's JSON.
nlohmann::json rdmaToJson(const Topology& topology, const RdmaReadiness& readiness);

}  // namespace peerlink::cli
