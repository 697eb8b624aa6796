// Reading back what `peerlink bench --json` wrote, so a saved run can be rendered again (text, CSV,
// HTML) without a GPU: `peerlink bench --from-json FILE`.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "peerlink/bench.hpp"
#include "peerlink/topology.hpp"

namespace peerlink::cli {

struct SavedBench {
  Topology topology;
  std::vector<BenchCaseResult> results;
  nlohmann::json generatedBy = nlohmann::json::object();  ///< the run's metadata; empty when the file has none
};

/// The cases, cells and topology of a "peerlink.bench" document. Throws Error(InvalidInput) naming
/// `origin` and the first problem (wrong schema, missing or mistyped field, bad topology).
SavedBench benchFromJson(const nlohmann::json& document, const std::string& origin);

/// Reads and parses a file written by --json; throws Error(InvalidInput) when missing or malformed.
SavedBench loadBenchFile(const std::string& path);

}  // namespace peerlink::cli
