// PEERLINK_COLL_HOST_STAGED's value (coll/rank_transport.hpp): the first byte chooses the world's size (1-8), the
// rest is the value. It parses into pairs of two different ranks of the world, each pair once per entry, or fails
// with Error(InvalidUsage); "all" is every pair once.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "coll/rank_transport.hpp"
#include "peerlink/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int nranks = 1 + data[0] % 8;
  const std::string value(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::pair<int, int>> pairs;
  try {
    pairs = peerlink::coll::forcedHostStagedPairs(value, nranks);
  } catch (const peerlink::Error& error) {
    if (error.code() != peerlink::ErrorCode::InvalidUsage) std::abort();
    return 0;
  }
  for (const auto& [a, b] : pairs) {
    if (a < 0 || b < 0 || a >= nranks || b >= nranks || a == b) std::abort();
  }
  if (value == "all" && pairs.size() != static_cast<std::size_t>(nranks * (nranks - 1) / 2)) std::abort();
  if (value.empty() && !pairs.empty()) std::abort();
  return 0;
}
