// What reading back every saved `--json` document shares (`peerlink bench --from-json`, `peerlink coll
// --from-json`): parsing the file, checking its schema, naming the file in every error, and the run's
// metadata ("generated_by").
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace peerlink::cli {

/// The JSON in the file at `path`; throws Error(InvalidInput) when it cannot be read or is not JSON.
nlohmann::json readJsonFile(const std::string& path);

/// Checks that `document` is a "peerlink.<kind>" document, runs `readBody` (which reads the rest of it)
/// and returns the run's metadata ("generated_by"; an empty object when the document has none). Throws
/// Error(InvalidInput) naming `origin` and the first problem: the wrong schema, or an Error or JSON error
/// that `readBody` threw.
nlohmann::json readSavedRun(const nlohmann::json& document, const std::string& kind, const std::string& origin,
                            const std::function<void()>& readBody);

}  // namespace peerlink::cli
