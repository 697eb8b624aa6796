// `peerlink topo` as text: GPU table, link matrix (like `nvidia-smi topo -m`), P2P matrix, expected
// bandwidth, legend, notes and warnings.
#pragma once

#include <string>

#include "peerlink/topology.hpp"

namespace peerlink::cli {

std::string formatTopologyText(const Topology& topology);

}  // namespace peerlink::cli
