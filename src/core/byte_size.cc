// Sizes with K, M and G suffixes (byte_size.hpp).
#include "core/byte_size.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

namespace peerlink {

std::optional<std::uint64_t> parseByteSize(const std::string& text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const unsigned long long number = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0) return std::nullopt;
  std::string suffix(end);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b') && suffix.size() <= 2) suffix.pop_back();
  unsigned shift = 0;
  if (suffix.size() == 1) {
    switch (std::toupper(static_cast<unsigned char>(suffix[0]))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      default: return std::nullopt;
    }
  } else if (!suffix.empty()) {
    return std::nullopt;
  }
  if (number > (std::numeric_limits<std::uint64_t>::max() >> shift)) return std::nullopt;
  return static_cast<std::uint64_t>(number) << shift;
}

}  // namespace peerlink
