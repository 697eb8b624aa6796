// Parsing, validation and lookup of PEERLINK_* parameters (declarations: param_registry.cc).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "core/byte_size.hpp"
#include "core/text.hpp"
#include "peerlink/error.hpp"
#include "peerlink/params.hpp"

extern char** environ;  // POSIX; the only place peerlink enumerates the environment.

namespace peerlink {
namespace {

constexpr const char* kPrefix = "PEERLINK_";

std::string toUpper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
  return text;
}

[[noreturn]] void rejectValue(const ParamSpec& spec, const std::string& text) {
  throw Error(ErrorCode::InvalidUsage,
              fmt::format("{}='{}' is not valid: expected {}", spec.name, printable(text, 100), describeAllowed(spec)));
}

// Edit distance, for "did you mean" on misspelled variable names.
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string unknownVariableMessage(const std::string& name) {
  const ParamSpec* closest = nullptr;
  size_t best = std::numeric_limits<size_t>::max();
  for (const ParamSpec& spec : paramRegistry()) {
    // Lengths further apart than a suggestion allows need no distance (which costs their product).
    const size_t longer = std::max(name.size(), spec.name.size());
    if (longer - std::min(name.size(), spec.name.size()) > 3) continue;
    const size_t distance = editDistance(name, spec.name);
    if (distance < best) {
      best = distance;
      closest = &spec;
    }
  }
  if (closest != nullptr && best <= 3) {
    return fmt::format("{} is not a peerlink parameter (did you mean {}?)", printable(name, 100), closest->name);
  }
  return fmt::format("{} is not a peerlink parameter (`peerlink env` lists them)", printable(name, 100));
}

}  // namespace

const ParamSpec& paramSpec(const std::string& name) {
  for (const ParamSpec& spec : paramRegistry()) {
    if (spec.name == name) return spec;
  }
  throw Error(ErrorCode::Internal, fmt::format("parameter {} is used but not declared in the registry", name));
}

std::string describeAllowed(const ParamSpec& spec) {
  switch (spec.type) {
    case ParamType::Bool: return "a boolean (0/1, true/false, yes/no, on/off)";
    case ParamType::Int: {
      std::string text = spec.bytes ? fmt::format("a size in {}..{} bytes (K, M, G: 1024, 1024^2, 1024^3)",
                                                  spec.minValue, spec.maxValue)
                                    : fmt::format("an integer in {}..{}", spec.minValue, spec.maxValue);
      if (spec.multipleOf > 1) text += fmt::format(", a multiple of {}", spec.multipleOf);
      return spec.zeroAllowed ? "0, or " + text : text;
    }
    case ParamType::Enum: return fmt::format("one of {}", fmt::join(spec.allowed, ", "));
    case ParamType::List: return fmt::format("ALL or a comma-separated list of {}", fmt::join(spec.allowed, ", "));
    case ParamType::String: return "any text";
  }
  return "?";
}

const char* paramAudienceName(ParamAudience audience) noexcept {
  switch (audience) {
    case ParamAudience::User: return "user";
    case ParamAudience::Tuning: return "tuning";
    case ParamAudience::Testing: return "testing";
  }
  return "?";
}

const char* paramSourceName(ParamSource source) noexcept {
  switch (source) {
    case ParamSource::Default: return "default";
    case ParamSource::Environment: return "environment";
    case ParamSource::Override: return "override";
  }
  return "?";
}

std::string canonicalParamValue(const ParamSpec& spec, const std::string& text) {
  std::string value = trimSpace(text);
  switch (spec.type) {
    case ParamType::Bool: {
      const std::string upper = toUpper(value);
      if (upper == "1" || upper == "TRUE" || upper == "YES" || upper == "ON") return "1";
      if (upper == "0" || upper == "FALSE" || upper == "NO" || upper == "OFF") return "0";
      rejectValue(spec, text);
    }
    case ParamType::Int: {
      if (value.empty()) rejectValue(spec, text);
      if (spec.bytes && !std::isdigit(static_cast<unsigned char>(value.back()))) {
        // A suffix: the size in bytes, then the same checks as a number.
        const std::optional<std::uint64_t> bytes = parseByteSize(value);
        if (!bytes || *bytes > static_cast<std::uint64_t>(std::numeric_limits<long long>::max())) {
          rejectValue(spec, text);
        }
        value = std::to_string(*bytes);
      }
      errno = 0;
      char* end = nullptr;
      const long long parsed = std::strtoll(value.c_str(), &end, 10);
      const bool inRange =
          parsed >= spec.minValue && parsed <= spec.maxValue && (spec.multipleOf <= 1 || parsed % spec.multipleOf == 0);
      if (errno != 0 || end == value.c_str() || *end != '\0' || !(inRange || (spec.zeroAllowed && parsed == 0))) {
        rejectValue(spec, text);
      }
      return std::to_string(parsed);
    }
    case ParamType::Enum: {
      const std::string upper = toUpper(value);
      for (const std::string& allowed : spec.allowed) {
        if (toUpper(allowed) == upper) return allowed;
      }
      rejectValue(spec, text);
    }
    case ParamType::List: {
      if (toUpper(value) == "ALL") return "ALL";
      std::vector<std::string> items;
      size_t start = 0;
      while (start <= value.size()) {
        const size_t comma = std::min(value.find(',', start), value.size());
        const std::string item = toUpper(trimSpace(value.substr(start, comma - start)));
        const auto match = std::find_if(spec.allowed.begin(), spec.allowed.end(),
                                        [&](const std::string& allowed) { return toUpper(allowed) == item; });
        if (match == spec.allowed.end()) rejectValue(spec, text);
        if (std::find(items.begin(), items.end(), *match) == items.end()) items.push_back(*match);
        start = comma + 1;
      }
      return fmt::format("{}", fmt::join(items, ","));
    }
    case ParamType::String: return value;
  }
  rejectValue(spec, text);
}

Params::Params() {
  for (const ParamSpec& spec : paramRegistry()) values_.push_back({&spec, spec.defaultValue, ParamSource::Default});
}

Params Params::fromMap(const std::map<std::string, std::string>& variables) {
  Params params;
  for (const auto& variable : variables) {
    const std::string& name = variable.first;
    if (name.rfind(kPrefix, 0) != 0) continue;
    const auto known = std::find_if(params.values_.begin(), params.values_.end(),
                                    [&](const ParamValue& value) { return value.spec->name == name; });
    if (known == params.values_.end()) {
      params.unknown_.push_back(unknownVariableMessage(name));
      continue;
    }
    known->value = canonicalParamValue(*known->spec, variable.second);
    known->source = ParamSource::Environment;
  }
  return params;
}

Params Params::fromEnvironment() {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* equals = std::strchr(*entry, '=');
    if (equals == nullptr || std::strncmp(*entry, kPrefix, std::strlen(kPrefix)) != 0) continue;
    variables.emplace(std::string(*entry, static_cast<size_t>(equals - *entry)), std::string(equals + 1));
  }
  return fromMap(variables);
}

std::map<std::string, std::string> readForeignEnvironment(const std::vector<std::string>& names) {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* equals = std::strchr(*entry, '=');
    if (equals == nullptr) continue;
    std::string name(*entry, static_cast<size_t>(equals - *entry));
    if (std::find(names.begin(), names.end(), name) != names.end()) variables.emplace(std::move(name), equals + 1);
  }
  return variables;
}

void Params::set(const std::string& name, const std::string& value) {
  ParamValue& entry = find(name);
  entry.value = canonicalParamValue(*entry.spec, value);
  entry.source = ParamSource::Override;
}

const ParamValue& Params::find(const std::string& name) const {
  for (const ParamValue& value : values_) {
    if (value.spec->name == name) return value;
  }
  paramSpec(name);  // throws Internal for an undeclared name
  throw Error(ErrorCode::Internal, fmt::format("parameter {} missing from Params", name));
}

ParamValue& Params::find(const std::string& name) {
  return const_cast<ParamValue&>(static_cast<const Params&>(*this).find(name));
}

bool Params::getBool(const std::string& name) const {
  const ParamValue& entry = find(name);
  if (entry.spec->type != ParamType::Bool) throw Error(ErrorCode::Internal, name + " is not a boolean parameter");
  return entry.value == "1";
}

std::int64_t Params::getInt(const std::string& name) const {
  const ParamValue& entry = find(name);
  if (entry.spec->type != ParamType::Int) throw Error(ErrorCode::Internal, name + " is not an integer parameter");
  return std::stoll(entry.value);
}

const std::string& Params::getString(const std::string& name) const {
  const ParamValue& entry = find(name);
  if (entry.spec->type != ParamType::String && entry.spec->type != ParamType::Enum) {
    throw Error(ErrorCode::Internal, name + " is not a string or enum parameter");
  }
  return entry.value;
}

std::vector<std::string> Params::getList(const std::string& name) const {
  const ParamValue& entry = find(name);
  if (entry.spec->type != ParamType::List) throw Error(ErrorCode::Internal, name + " is not a list parameter");
  if (entry.value == "ALL") return entry.spec->allowed;
  std::vector<std::string> items;
  size_t start = 0;
  while (start < entry.value.size()) {
    const size_t comma = std::min(entry.value.find(',', start), entry.value.size());
    items.push_back(entry.value.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

}  // namespace peerlink
