#include "size_parse.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink::cli {

std::size_t parseSize(const std::string& text, const std::string& flag) {
  auto reject = [&]() -> std::size_t {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{} '{}' is not a size: use a number with an optional K, M or G suffix (e.g. 64K, 256M)",
                            flag, text));
  };
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return reject();
  errno = 0;
  char* end = nullptr;
  const unsigned long long number = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0) return reject();
  std::string suffix(end);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b') && suffix.size() <= 2) suffix.pop_back();
  unsigned shift = 0;
  if (suffix.size() == 1) {
    switch (std::toupper(static_cast<unsigned char>(suffix[0]))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      default: return reject();
    }
  } else if (!suffix.empty()) {
    return reject();
  }
  if (number > (std::numeric_limits<std::size_t>::max() >> shift)) return reject();
  return static_cast<std::size_t>(number) << shift;
}

std::string formatSize(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 30) && bytes % (std::size_t{1} << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (std::size_t{1} << 10) && bytes % (std::size_t{1} << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

}  // namespace peerlink::cli
