#include "saved_json_read.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink::cli {

using nlohmann::json;

json readJsonFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(ErrorCode::InvalidInput, fmt::format("cannot read {}", path));
  std::ostringstream text;
  text << file.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::exception& error) {
    throw Error(ErrorCode::InvalidInput, fmt::format("{}: not valid JSON: {}", path, error.what()));
  }
}

json readSavedRun(const json& document, const std::string& kind, const std::string& origin,
                  const std::function<void()>& readBody) {
  try {
    const std::string schema = "peerlink." + kind;
    if (!document.is_object() || document.value("schema", std::string()) != schema) {
      throw Error(ErrorCode::InvalidInput,
                  fmt::format("not a peerlink {} result (schema is not \"{}\")", kind, schema));
    }
    readBody();
    if (document.contains("generated_by") && document.at("generated_by").is_object()) {
      return document.at("generated_by");
    }
    return json::object();
  } catch (const Error& error) {
    // Readers of nested parts (the topology) already name the file.
    if (std::string(error.what()).rfind(origin, 0) == 0) throw;
    throw Error(ErrorCode::InvalidInput, fmt::format("{}: {}", origin, error.what()));
  } catch (const json::exception& error) {
    throw Error(ErrorCode::InvalidInput, fmt::format("{}: {}", origin, error.what()));
  }
}

}  // namespace peerlink::cli
