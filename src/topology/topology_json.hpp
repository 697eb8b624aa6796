// Reading a topology out of a JSON document already parsed: a topology file, or the "topology" a saved run
// carries (topologyFromJson in topology.hpp parses text first).
#pragma once

#include <string>

#include "core/json_io.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// The topology at `root`, every field type- and range-checked (docs/topology-format.md) and the whole
/// validated; `source` becomes Topology::source. Pairs come back in (src, dst) order. Throws
/// Error(InvalidInput) naming the document and the field.
Topology topologyFromJsonNode(const JsonNode& root, const std::string& source);

}  // namespace peerlink
