// The typed registry of PEERLINK_* parameters.
//
// Every PEERLINK_* variable is declared once (src/core/param_registry.cc) with its type, default,
// allowed values and description. A Params object holds one resolved value per declared parameter and
// where it came from; malformed values are errors naming the variable and what is allowed, never a
// silent default. Nothing else in peerlink reads the environment for PEERLINK_* settings.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace peerlink {

enum class ParamType {
  Bool,    ///< 0/1, true/false, yes/no, on/off (case-insensitive); stored as "0" or "1"
  Int,     ///< decimal integer within [minValue, maxValue]
  Enum,    ///< one of `allowed` (case-insensitive); stored as spelled in `allowed`
  List,    ///< comma-separated subset of `allowed`; "ALL" means every one
  String,  ///< free text (paths)
};

/// Whom a parameter is for: `peerlink env` lists users' and, with --all, the others.
enum class ParamAudience {
  User,     ///< a setting for users of the library and the CLI
  Tuning,   ///< a knob for measuring and tuning peerlink itself (grids, chunks, engines)
  Testing,  ///< for tests only (fault injection, fake sysfs trees, forced routes)
};
const char* paramAudienceName(ParamAudience audience) noexcept;  ///< "user", "tuning", "testing"

/// One declared parameter.
struct ParamSpec {
  std::string name;  ///< "PEERLINK_DEBUG"
  ParamType type = ParamType::String;
  std::string defaultValue;          ///< in canonical form
  std::vector<std::string> allowed;  ///< Enum/List only
  std::int64_t minValue = 0;         ///< Int only
  std::int64_t maxValue = 0;         ///< Int only
  std::string description;           ///< one line, for `peerlink env` and the docs
  ParamAudience audience = ParamAudience::User;
  std::int64_t multipleOf = 1;  ///< Int only: a value in [minValue, maxValue] is a multiple of this
  bool zeroAllowed = false;     ///< Int only: 0 is allowed beside [minValue, maxValue] (a built-in choice)
  bool bytes = false;           ///< Int only: a size in bytes, which may be given with a K, M or G suffix (512M)
};

/// Every declared parameter, in documentation order.
const std::vector<ParamSpec>& paramRegistry();
/// The spec for `name`; throws Error(Internal) for an undeclared name (a bug in the caller).
const ParamSpec& paramSpec(const std::string& name);
/// Human-readable type and allowed values, e.g. "one of WARN, INFO, TRACE" or "an integer in 1..3600000".
std::string describeAllowed(const ParamSpec& spec);

enum class ParamSource { Default, Environment, Override };
const char* paramSourceName(ParamSource source) noexcept;  ///< "default", "environment", "override"

/// One resolved parameter.
struct ParamValue {
  const ParamSpec* spec = nullptr;
  std::string value;  ///< canonical form
  ParamSource source = ParamSource::Default;
};

/// Resolved values of every declared parameter. Cheap to copy; pass it to what needs settings.
class Params {
 public:
  /// All defaults.
  Params();
  /// Reads every declared variable from the process environment. Throws Error(InvalidUsage) naming the
  /// first malformed one.
  static Params fromEnvironment();
  /// Same, from a given name -> value map (tests, embedding).
  static Params fromMap(const std::map<std::string, std::string>& variables);

  /// Overrides one parameter (e.g. from a command-line flag), validated like the environment.
  void set(const std::string& name, const std::string& value);

  bool getBool(const std::string& name) const;
  std::int64_t getInt(const std::string& name) const;
  /// Enum and String values.
  const std::string& getString(const std::string& name) const;
  /// List values, expanded ("ALL" becomes every allowed value).
  std::vector<std::string> getList(const std::string& name) const;

  /// Every parameter, in registry order.
  const std::vector<ParamValue>& values() const { return values_; }
  /// PEERLINK_* variables that were set but are not declared (likely typos), each with a suggestion.
  const std::vector<std::string>& unknownVariables() const { return unknown_; }

 private:
  const ParamValue& find(const std::string& name) const;
  ParamValue& find(const std::string& name);
  std::vector<ParamValue> values_;
  std::vector<std::string> unknown_;
};

/// The variables of other programs named in `names` that are set (launchers' RANK, OMPI_COMM_WORLD_RANK...),
/// read here beside the registry so that peerlink reads its environment in one place. Not PEERLINK_* settings.
std::map<std::string, std::string> readForeignEnvironment(const std::vector<std::string>& names);

/// Validates `text` against `spec` and returns its canonical form; throws Error(InvalidUsage) whose
/// message names the variable, the bad value and what is allowed.
std::string canonicalParamValue(const ParamSpec& spec, const std::string& text);

}  // namespace peerlink
