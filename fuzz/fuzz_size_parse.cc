// Sizes and sweeps (-b/-e/-f of bench and coll): two sizes and a factor from the input, separated by NUL
// bytes. A size parses or fails with Error(InvalidUsage); a sweep is at most kMaxSweepSizes strictly
// increasing sizes within its bounds, or fails with Error(InvalidUsage).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "peerlink/bench.hpp"
#include "peerlink/error.hpp"
#include "size_parse.hpp"

namespace {

std::vector<std::string> fields(const std::string& text) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == '\0') {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> parts = fields(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const std::size_t smallest = peerlink::cli::parseSize(parts[0], "-b");
    peerlink::cli::formatSize(smallest);
    if (parts.size() < 3) return 0;
    const std::size_t largest = peerlink::cli::parseSize(parts[1], "-e");
    const double factor = std::strtod(parts[2].c_str(), nullptr);
    const std::vector<std::size_t> sizes = peerlink::sweepSizes(smallest, largest, factor);
    if (sizes.empty() || sizes.size() > peerlink::kMaxSweepSizes || sizes.front() != smallest ||
        sizes.back() > largest) {
      __builtin_trap();
    }
    for (std::size_t i = 1; i < sizes.size(); ++i) {
      if (sizes[i] <= sizes[i - 1]) __builtin_trap();
    }
  } catch (const peerlink::Error& error) {
    if (error.code() != peerlink::ErrorCode::InvalidUsage) __builtin_trap();
  }
  return 0;
}
