#include "core/json_io.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/text.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kExcerptBytes = 32;

[[noreturn]] void notJson(const std::string& origin, const std::string& problem) {
  throw Error(ErrorCode::InvalidInput, fmt::format("{}: not JSON: {}", origin, problem));
}

// Line and column (from 1) of byte `offset`, for messages.
std::pair<std::size_t, std::size_t> lineAndColumn(const std::string& text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// Rejects nesting deeper than kMaxJsonDepth and more than kMaxJsonValues values before the parser builds
// anything: one pass over the bytes, counting brackets and commas outside strings.
void checkShape(const std::string& text, const std::string& origin) {
  int depth = 0;
  std::size_t values = 1;
  bool inString = false;
  bool escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        inString = false;
      }
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{' || c == ',') {
      if (c != ',' && ++depth > kMaxJsonDepth) {
        const auto [line, column] = lineAndColumn(text, i);
        notJson(origin,
                fmt::format("line {}, column {}: nested more than {} levels deep", line, column, kMaxJsonDepth));
      }
      if (++values > kMaxJsonValues) {
        notJson(origin,
                fmt::format("more than {} values (the most a document peerlink reads may have)", kMaxJsonValues));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

// nlohmann's message without its "[json.exception.parse_error.101] " tag, and with the input it quotes
// ("last read: '...'") cut short and made printable.
std::string parserProblem(const std::string& what) {
  std::string problem = what;
  const std::size_t tagEnd = problem.find("] ");
  if (tagEnd != std::string::npos) problem = problem.substr(tagEnd + 2);
  const std::size_t quoted = problem.find("; last read: '");
  if (quoted != std::string::npos) {
    const std::size_t start = quoted + std::string("; last read: '").size();
    std::string lastRead = problem.substr(start);
    if (!lastRead.empty() && lastRead.back() == '\'') lastRead.pop_back();
    problem = problem.substr(0, quoted) + "; last read: '" + printable(lastRead, kExcerptBytes) + "'";
  }
  return printable(problem, 300);
}

}  // namespace

Json parseJson(const std::string& text, const std::string& origin) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) notJson(origin, "the file is empty");
  checkShape(text, origin);
  try {
    return Json::parse(text);
  } catch (const Json::exception& error) {
    notJson(origin, parserProblem(error.what()));
  }
}

std::string jsonExcerpt(const Json& value) {
  switch (value.type()) {
    case Json::value_t::array:
    case Json::value_t::object: {
      // A few scalars are shown as written ("[1,2]"); anything larger by its kind and size.
      const bool small = value.size() <= 4 && std::none_of(value.begin(), value.end(), [](const Json& element) {
                           return element.is_structured() || element.is_string();
                         });
      if (small) return printable(value.dump(), kExcerptBytes);
      return fmt::format("an {} of {} {}", value.is_array() ? "array" : "object", value.size(),
                         value.is_array() ? "element(s)" : "member(s)");
    }
    case Json::value_t::string: {
      const std::string& text = value.get_ref<const std::string&>();
      return "\"" + printable(text, kExcerptBytes) + "\"";
    }
    case Json::value_t::binary: return "binary data";
    case Json::value_t::discarded: return "nothing";
    default: return value.dump();  // a number, a boolean or null: short by nature
  }
}

std::string jsonText(const Json& value, int indent) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

std::string jsonText(const nlohmann::ordered_json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

JsonNode::JsonNode(const Json& value, std::string origin, std::string path)
    : value_(&value), origin_(std::move(origin)), path_(std::move(path)) {}

void JsonNode::fail(const std::string& problem) const {
  if (path_.empty()) throw Error(ErrorCode::InvalidInput, fmt::format("{}: {}", origin_, problem));
  throw Error(ErrorCode::InvalidInput, fmt::format("{}: {}: {}", origin_, path_, problem));
}

void JsonNode::failType(const char* expected) const {
  fail(fmt::format("expected {}, got {}", expected, jsonExcerpt(*value_)));
}

void JsonNode::expectObject() const {
  if (!value_->is_object()) failType("an object");
}

JsonNode JsonNode::child(std::string path, const Json& value) const {
  return JsonNode(value, origin_, std::move(path));
}

std::optional<JsonNode> JsonNode::member(const char* key) const {
  expectObject();
  const auto found = value_->find(key);
  if (found == value_->end()) return std::nullopt;
  return child(path_.empty() ? std::string(key) : path_ + "." + key, *found);
}

JsonNode JsonNode::required(const char* key) const {
  std::optional<JsonNode> node = member(key);
  if (!node) child(path_.empty() ? std::string(key) : path_ + "." + key, *value_).fail("required field is missing");
  return *node;
}

std::vector<JsonNode> JsonNode::elements(std::size_t maxElements) const {
  if (!value_->is_array()) failType("an array");
  if (value_->size() > maxElements) {
    fail(fmt::format("{} elements, more than the {} allowed here", value_->size(), maxElements));
  }
  std::vector<JsonNode> nodes;
  nodes.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i) {
    nodes.push_back(child(path_ + "[" + std::to_string(i) + "]", (*value_)[i]));
  }
  return nodes;
}

std::vector<std::pair<std::string, JsonNode>> JsonNode::members(std::size_t maxMembers) const {
  expectObject();
  if (value_->size() > maxMembers) {
    fail(fmt::format("{} members, more than the {} allowed here", value_->size(), maxMembers));
  }
  std::vector<std::pair<std::string, JsonNode>> nodes;
  for (const auto& [key, value] : value_->items()) {
    const std::string shown = printable(key, kExcerptBytes);
    nodes.emplace_back(shown, child(path_.empty() ? shown : path_ + "." + shown, value));
  }
  return nodes;
}

std::int64_t JsonNode::integer(std::int64_t min, std::int64_t max) const {
  if (!value_->is_number_integer()) failType("an integer");
  bool fits = false;
  std::int64_t result = 0;
  if (value_->is_number_unsigned()) {
    const auto unsignedValue = value_->get<std::uint64_t>();
    fits = max >= 0 && unsignedValue <= static_cast<std::uint64_t>(max);
    result = fits ? static_cast<std::int64_t>(unsignedValue) : 0;
  } else {
    result = value_->get<std::int64_t>();
    fits = true;
  }
  if (!fits || result < min || result > max) fail(fmt::format("{} is out of range ({}..{})", value_->dump(), min, max));
  return result;
}

std::uint64_t JsonNode::unsignedInteger(std::uint64_t max) const {
  if (!value_->is_number_integer()) failType("a non-negative integer");
  if (!value_->is_number_unsigned()) failType("a non-negative integer");
  const auto result = value_->get<std::uint64_t>();
  if (result > max) fail(fmt::format("{} is out of range (0..{})", result, max));
  return result;
}

double JsonNode::number(double min, double max) const {
  if (!value_->is_number()) failType("a number");
  const auto result = value_->get<double>();
  if (!std::isfinite(result) || result < min || result > max) {
    fail(fmt::format("{} is out of range ({}..{})", value_->dump(), min, max));
  }
  return result;
}

bool JsonNode::boolean() const {
  if (!value_->is_boolean()) failType("true or false");
  return value_->get<bool>();
}

std::string JsonNode::name() const {
  if (!value_->is_string()) failType("a string");
  const std::string& result = value_->get_ref<const std::string&>();
  for (std::size_t i = 0; i < result.size(); ++i) {
    if (isControlByte(static_cast<unsigned char>(result[i]))) {
      fail(fmt::format("{} has a control character (byte 0x{:02x} at offset {})", jsonExcerpt(*value_),
                       static_cast<unsigned char>(result[i]), i));
    }
  }
  return result;
}

std::string JsonNode::text() const {
  if (!value_->is_string()) failType("a string");
  const std::string& result = value_->get_ref<const std::string&>();
  return printable(result, result.size());
}

}  // namespace peerlink
