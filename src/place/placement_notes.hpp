// What a placement could not judge, said in notes: unknown PCIe links, PCI paths and NUMA nodes, a flat PCI tree,
// GPUs named by UUID, a heuristic search, and how the doctor's verdicts were used (or that there were none).
#pragma once

#include <string>
#include <vector>

#include "peerlink/placement.hpp"
#include "place/link_table.hpp"

namespace peerlink::place {

/// The notes of `placement` (its groups, search and verdict pairs filled), then discovery's own notes.
std::vector<std::string> placementNotes(const Topology& topology, const LinkTable& table,
                                        const PlacementRequest& request, const GpuPlacement& placement);

}  // namespace peerlink::place
