// Reading back what `peerlink coll --json` wrote, so a saved run can be shown again without a GPU:
// `peerlink coll --from-json FILE`.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "coll_bench/coll_bench.hpp"

namespace peerlink::cli {

struct SavedColl {
  coll::CollRun run;
  nlohmann::json generatedBy = nlohmann::json::object();  ///< the run's metadata; empty when the file has none
};

/// The run in a "peerlink.coll" document. Throws Error(InvalidInput) naming `origin` and the first problem
/// (wrong schema or version, missing or mistyped field, unknown names).
SavedColl collFromJson(const nlohmann::json& document, const std::string& origin);

/// Reads and parses a file written by --json; throws Error(InvalidInput) when missing or malformed.
SavedColl loadCollFile(const std::string& path);

}  // namespace peerlink::cli
