#include "size_parse.hpp"

#include <cstdint>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "core/byte_size.hpp"
#include "peerlink/error.hpp"

namespace peerlink::cli {

std::size_t parseSize(const std::string& text, const std::string& flag) {
  const std::optional<std::uint64_t> bytes = parseByteSize(text);
  if (!bytes || *bytes > std::numeric_limits<std::size_t>::max()) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{} '{}' is not a size: use a number with an optional K, M or G suffix (e.g. 64K, 256M)",
                            flag, text));
  }
  return static_cast<std::size_t>(*bytes);
}

std::string formatSize(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 30) && bytes % (std::size_t{1} << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (std::size_t{1} << 10) && bytes % (std::size_t{1} << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

}  // namespace peerlink::cli
