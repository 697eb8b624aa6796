// The unique id (src/bootstrap/unique_id.cc): its text as users pass it through environment variables and
// stores (uniqueIdFromString), and its 128 bytes as they travel (decodeUniqueId). Text decodes to an id whose
// text is the input's, trimmed and in lower case, or fails with Error(InvalidUsage) (a bad id is the caller's);
// bytes decode to contents that encode back to the same bytes, or fail with Error(InvalidUsage).
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "bootstrap/unique_id.hpp"
#include "core/text.hpp"

namespace {

using namespace peerlink;

template <typename Body>
void expectValueOrInvalidUsage(Body body) {
  try {
    body();
  } catch (const Error& error) {
    if (error.code() != ErrorCode::InvalidUsage) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  expectValueOrInvalidUsage([&] {
    const UniqueId id = uniqueIdFromString(text);
    std::string lower = trimSpace(text);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (uniqueIdToString(id) != lower) __builtin_trap();
    if (uniqueIdAddress(id).empty()) __builtin_trap();
  });
  expectValueOrInvalidUsage([&] {
    UniqueId id;
    std::memcpy(id.bytes, data, std::min(size, kUniqueIdBytes));
    const bootstrap::UniqueIdContents contents = bootstrap::decodeUniqueId(id);
    const UniqueId again = bootstrap::encodeUniqueId(contents);
    if (std::memcmp(again.bytes, id.bytes, kUniqueIdBytes) != 0) __builtin_trap();
    if (std::memcmp(uniqueIdFromString(uniqueIdToString(id)).bytes, id.bytes, kUniqueIdBytes) != 0) __builtin_trap();
  });
  return 0;
}
