// `peerlink place`'s output: the chosen partition for people (groups, why, the next best, the lines to paste,
// notes) and as one JSON document.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "peerlink/placement.hpp"
#include "peerlink/topology.hpp"

namespace peerlink::cli {

/// The text report.
std::string formatPlacementText(const Topology& topology, const GpuPlacement& placement);

/// {"schema": "peerlink.placement", "version": 1, "topology", "request", "search", "groups", "unused",
/// "next_best", "summary", "notes", "verdicts", "refusal"}; docs/place.md describes the fields.
nlohmann::json placementToJson(const Topology& topology, const GpuPlacement& placement);

}  // namespace peerlink::cli
