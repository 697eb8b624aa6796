// The link model: raw bandwidth one direction of a link can carry, from what the topology knows.
// Pure functions; the figures are the signalling rates NVIDIA and PCI-SIG publish, not measurements.
#pragma once

#include <string>

#include "peerlink/topology.hpp"

namespace peerlink {

/// NVLink per-link, per-direction rate in GB/s by NVLink generation (1..5); 0 for unknown generations.
double nvlinkRateForVersion(int version);

/// PCIe raw bandwidth per direction in GB/s for a generation (1..6) and lane count, after line coding
/// (8b/10b for Gen1-2, 128b/130b for Gen3-5, FLIT for Gen6); 0 when either is unknown.
double pcieGBps(int gen, int width);

/// The raw bandwidth from src to dst and how it was derived, from the pair's NVLinks or, without them,
/// the narrower of the two GPUs' PCIe links. {0, reason} where it cannot be known (no P2P, or no link
/// information).
struct ExpectedBandwidth {
  double gbps = 0;
  std::string basis;
};
ExpectedBandwidth expectedBandwidth(const Topology& topology, const GpuPair& pair);

/// Fills expectedGBps/bandwidthBasis of every pair.
void applyLinkModel(Topology& topology);

}  // namespace peerlink
