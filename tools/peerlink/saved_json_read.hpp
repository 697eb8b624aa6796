// What reading back every saved `--json` document shares (`peerlink bench --from-json`, `peerlink coll
// --from-json`): reading the file within peerlink's bounds, parsing it, checking its schema, naming the file
// and the field in every error, and the run's metadata ("generated_by").
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/json_io.hpp"

namespace peerlink::cli {

/// The JSON in the file at `path` ("-": standard input); throws Error(InvalidInput) when it cannot be read
/// (missing, a folder, not a regular file, larger than kMaxJsonInputBytes) or is not JSON.
nlohmann::json readJsonFile(const std::string& path);

/// Checks that `document` is a "peerlink.<kind>" document, runs `readBody` on its root (which reads the rest
/// of it through JsonNode, so every error names `origin` and the field) and returns the run's metadata
/// ("generated_by"; an empty object when the document has none). Throws Error(InvalidInput).
nlohmann::json readSavedRun(const nlohmann::json& document, const std::string& kind, const std::string& origin,
                            const std::function<void(const JsonNode&)>& readBody);

/// Time in microseconds or milliseconds a saved run may hold: finite, not negative, under 10^15.
inline constexpr double kMaxSavedTime = 1e15;
/// Bandwidth in GB/s a saved run may hold.
inline constexpr double kMaxSavedGBps = 1e9;

}  // namespace peerlink::cli
