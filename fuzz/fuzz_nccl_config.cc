// The ncclConfig_t an application hands ncclCommInitRankConfig / ncclCommSplit (nccl_api/config.cc): the input is
// the caller's struct, as many bytes as its size field claims (40 where that is no config's size, as the reader
// then looks at no more), so AddressSanitizer catches a read past the caller's struct. Its two string fields
// (netName, commName) point into the input's bytes past the struct, NUL-terminated, or are NULL where the input
// says 0 -- an application's pointers are its own, not outside input. A config reads to one whose size and version
// are the caller's, or fails with ncclInvalidArgument and a message; describing it never fails.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <variant>

#include "nccl_api/config.hpp"

namespace {

using namespace peerlink::nccl;

std::size_t claimedSize(const std::uint8_t* data, std::size_t size) {
  std::size_t claimed = 0;
  if (size >= offsetof(ncclConfig_t, size) + sizeof claimed) {
    std::memcpy(&claimed, data + offsetof(ncclConfig_t, size), sizeof claimed);
  }
  return claimed >= kMinConfigBytes && claimed <= kMaxConfigBytes ? claimed : kMinConfigBytes;
}

// The pointer field at `offset`, if the struct holds it: NULL where the input has 0 there, else one of `texts`.
void aimPointer(unsigned char* config, std::size_t bytes, std::size_t offset, const std::string (&texts)[2]) {
  if (offset + sizeof(const char*) > bytes) return;
  std::uint64_t value = 0;
  std::memcpy(&value, config + offset, std::min(sizeof value, sizeof(const char*)));
  const char* aimed = value == 0 ? nullptr : texts[value & 1].c_str();
  std::memcpy(config + offset, &aimed, sizeof aimed);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::size_t bytes = claimedSize(data, size);
  const auto config = std::make_unique<unsigned char[]>(bytes);  // exactly the caller's struct
  std::memcpy(config.get(), data, std::min(size, bytes));
  // The strings: what follows the struct, split at its first newline.
  const std::string tail = size > bytes ? std::string(reinterpret_cast<const char*>(data) + bytes, size - bytes) : "";
  const std::size_t newline = std::min(tail.find('\n'), tail.size());
  const std::string texts[2] = {tail.substr(0, newline), newline < tail.size() ? tail.substr(newline + 1) : ""};
  aimPointer(config.get(), bytes, offsetof(ncclConfig_t, netName), texts);
  aimPointer(config.get(), bytes, offsetof(ncclConfig_t, commName), texts);

  const auto read = readCommConfig(reinterpret_cast<const ncclConfig_t*>(config.get()));
  if (const auto* failure = std::get_if<Failure>(&read)) {
    if (failure->result != ncclInvalidArgument || failure->message.empty()) __builtin_trap();
    return 0;
  }
  const CommConfig& served = std::get<CommConfig>(read);
  if (served.size != bytes || served.version < 21400) __builtin_trap();
  if (served.newerFields != (bytes > sizeof(ncclConfig_t))) __builtin_trap();
  if (served.splitShare != 0 && served.splitShare != 1) __builtin_trap();
  if (describeConfig(served).find("-byte config") == std::string::npos) __builtin_trap();
  if (versionText(static_cast<int>(served.version)).empty()) __builtin_trap();
  return 0;
}
