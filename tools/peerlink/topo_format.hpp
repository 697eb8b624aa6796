// `peerlink topo` as text: GPU table, link matrix (like `nvidia-smi topo -m`), P2P matrix, expected
// bandwidth, legend, notes and warnings.
#pragma once

#include <string>

#include "peerlink/topology.hpp"

namespace peerlink::cli {

/// The link cell of a pair as nvidia-smi writes it: "NV18" for NVLink, else the path class ("PIX", ...).
std::string linkCell(const GpuPair& pair);

std::string formatTopologyText(const Topology& topology);

}  // namespace peerlink::cli
