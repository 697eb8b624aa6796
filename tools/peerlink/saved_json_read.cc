#include "saved_json_read.hpp"

#include <fmt/format.h>

#include "core/input_file.hpp"
#include "core/text.hpp"
#include "peerlink/error.hpp"

namespace peerlink::cli {

using nlohmann::json;

json readJsonFile(const std::string& path) {
  return parseJson(readInputFile(path, "saved run", kMaxJsonInputBytes), printable(path));
}

json readSavedRun(const json& document, const std::string& kind, const std::string& origin,
                  const std::function<void(const JsonNode&)>& readBody) {
  const JsonNode root(document, printable(origin));
  const std::string schema = "peerlink." + kind;
  if (!document.is_object()) root.failType(fmt::format("a peerlink {} result (an object)", kind).c_str());
  const std::optional<JsonNode> found = root.member("schema");
  if (!found || !found->value().is_string() || found->value().get<std::string>() != schema) {
    root.fail(fmt::format("not a peerlink {} result (schema is not \"{}\")", kind, schema));
  }
  readBody(root);
  if (document.contains("generated_by") && document.at("generated_by").is_object()) {
    return document.at("generated_by");
  }
  return json::object();
}

}  // namespace peerlink::cli
