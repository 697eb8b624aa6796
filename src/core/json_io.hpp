// JSON at peerlink's boundary: documents read from outside (topology files, saved runs) parsed with a
// bounded depth and read field by field with type and range checks, every error naming the document and
// the field's path ("cells[3].median_us"); and JSON written out from any bytes the system gives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace peerlink {

/// The deepest nesting peerlink accepts in a document it reads (its own are at most 8 deep). The bound keeps
/// every recursive walk of a document (printing, comparing, reading) far from the stack's end.
inline constexpr int kMaxJsonDepth = 64;

/// The most values (elements and members, at any depth) a document peerlink reads may have: a topology of
/// 512 GPUs has 3.7 million. Bounds the memory parsing takes, whatever the text (`[{},{},...]` costs tens
/// of bytes per byte of text).
inline constexpr std::size_t kMaxJsonValues = std::size_t{8} << 20;

/// Parses `text` as one JSON document. Throws Error(InvalidInput) "<origin>: not JSON: <problem>" for
/// malformed text, nesting deeper than kMaxJsonDepth, more than kMaxJsonValues values and numbers out of
/// range (1e999), quoting at most a few printable characters of the input.
nlohmann::json parseJson(const std::string& text, const std::string& origin);

/// A value as a message may quote it: numbers, booleans and null as written, strings quoted and cut to
/// 32 bytes, arrays and objects by their kind and size; always printable and short.
std::string jsonExcerpt(const nlohmann::json& value);

/// JSON text of `value` (`indent` as nlohmann's dump) that never throws: bytes that are not UTF-8 (a file
/// name, an environment value, a GPU name) become U+FFFD.
std::string jsonText(const nlohmann::json& value, int indent = 2);
std::string jsonText(const nlohmann::ordered_json& value, int indent = 2);

/// A JSON value with the document it belongs to and where it sits in it, so that every error names both:
/// "topology file t.json: gpus[2].pcie.gen: -1 is out of range (0..16)". Readers of outside JSON take every
/// field through it; each getter checks the type and the range before the value is used.
class JsonNode {
 public:
  /// `origin` names the document in messages ("topology file t.json"); `path` is this value's place in it.
  JsonNode(const nlohmann::json& value, std::string origin, std::string path = "");

  const nlohmann::json& value() const { return *value_; }
  const std::string& path() const { return path_; }
  const std::string& origin() const { return origin_; }

  /// Throws Error(InvalidInput) "<origin>: <path>: <problem>".
  [[noreturn]] void fail(const std::string& problem) const;
  /// "expected <expected>, got <excerpt>".
  [[noreturn]] void failType(const char* expected) const;

  bool isNull() const { return value_->is_null(); }
  void expectObject() const;
  /// The member `key` of this object (which must be one); nullopt when absent.
  std::optional<JsonNode> member(const char* key) const;
  /// The member `key`; "required field is missing" when absent.
  JsonNode required(const char* key) const;
  /// The elements of this array, which may have at most `maxElements`.
  std::vector<JsonNode> elements(std::size_t maxElements) const;
  /// The members of this object in document order, at most `maxMembers`; keys made printable and cut to 32
  /// bytes.
  std::vector<std::pair<std::string, JsonNode>> members(std::size_t maxMembers) const;

  /// A JSON integer in [min, max] (1.5, "3" and 1e3 are rejected, not truncated or converted).
  std::int64_t integer(std::int64_t min, std::int64_t max) const;
  /// int-typed fields: integer() within [min, max], which must fit an int.
  int smallInteger(int min, int max) const { return static_cast<int>(integer(min, max)); }
  /// A non-negative JSON integer up to `max`.
  std::uint64_t unsignedInteger(std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const;
  /// A finite number in [min, max].
  double number(double min, double max) const;
  bool boolean() const;
  /// A string with no control characters (names, ids, paths): one with them is rejected, naming the field.
  std::string name() const;
  /// A string of free text (a reason, an error message): control characters are shown as `\xNN`.
  std::string text() const;

 private:
  JsonNode child(std::string path, const nlohmann::json& value) const;

  const nlohmann::json* value_;
  std::string origin_;
  std::string path_;
};

}  // namespace peerlink
