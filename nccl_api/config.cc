#include "nccl_api/config.hpp"

#include <climits>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text.hpp"

namespace peerlink::nccl {
namespace {

constexpr std::size_t kMaxNameBytes = 256;

// Whether the caller's struct of `size` bytes holds the field at `offset` of `bytes`.
constexpr bool covers(std::size_t size, std::size_t offset, std::size_t bytes) {
  return offset + bytes <= size;
}

// The field's value from the caller's bytes, or `fallback` where the struct is too short to hold it.
template <typename T>
T field(const unsigned char* raw, std::size_t size, std::size_t offset, T fallback) {
  if (!covers(size, offset, sizeof(T))) return fallback;
  T value;
  std::memcpy(&value, raw + offset, sizeof value);
  return value;
}

// A C string the caller owns, bounded and made printable for logs.
std::string boundedText(const char* text) {
  if (text == nullptr) return {};
  std::size_t length = 0;
  while (length < kMaxNameBytes && text[length] != '\0') ++length;
  return printable(std::string(text, length));
}

}  // namespace

std::string versionText(int code) {
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100);
}

std::variant<CommConfig, Failure> readCommConfig(const ncclConfig_t* config) {
  CommConfig result;
  if (config == nullptr) return result;
  const auto* raw = reinterpret_cast<const unsigned char*>(config);
  // magic and version sit at the same offsets in every version, and inside the smallest struct.
  const auto magic = field<unsigned>(raw, kMinConfigBytes, offsetof(ncclConfig_t, magic), 0);
  if (magic != kConfigMagic) {
    return Failure{ncclInvalidArgument, fmt::format("ncclConfig_t has magic 0x{:08x}, not 0x{:08x}: initialize it with "
                                                    "NCCL_CONFIG_INITIALIZER",
                                                    magic, kConfigMagic)};
  }
  const auto size = field<std::size_t>(raw, kMinConfigBytes, offsetof(ncclConfig_t, size), 0);
  if (size < kMinConfigBytes || size > kMaxConfigBytes) {
    return Failure{ncclInvalidArgument,
                   fmt::format("ncclConfig_t says it is {} bytes: not a config of any NCCL version ({} to {} bytes); "
                               "initialize it with NCCL_CONFIG_INITIALIZER",
                               size, kMinConfigBytes, kMaxConfigBytes)};
  }
  const auto version = field<unsigned>(raw, size, offsetof(ncclConfig_t, version), 0);
  if (version < 21400) {
    return Failure{ncclInvalidArgument,
                   fmt::format("ncclConfig_t says NCCL version {}: configs exist from NCCL 2.14 (21400) on; "
                               "initialize it with NCCL_CONFIG_INITIALIZER",
                               version)};
  }
  result.size = size;
  result.version = version;
  result.newerFields = size > sizeof(ncclConfig_t);
  const int blocking = field<int>(raw, size, offsetof(ncclConfig_t, blocking), NCCL_CONFIG_UNDEF_INT);
  if (blocking != NCCL_CONFIG_UNDEF_INT && blocking != 0 && blocking != 1) {
    return Failure{ncclInvalidArgument, fmt::format("ncclConfig_t.blocking is {}: 0 or 1", blocking)};
  }
  result.blocking = blocking != 0;
  const int splitShare = field<int>(raw, size, offsetof(ncclConfig_t, splitShare), NCCL_CONFIG_UNDEF_INT);
  if (splitShare != NCCL_CONFIG_UNDEF_INT && splitShare != 0 && splitShare != 1) {
    return Failure{ncclInvalidArgument, fmt::format("ncclConfig_t.splitShare is {}: 0 or 1", splitShare)};
  }
  result.splitShare = splitShare == 1 ? 1 : 0;
  result.name = boundedText(field<const char*>(raw, size, offsetof(ncclConfig_t, commName), nullptr));
  // Hints for NCCL's own kernels and network: read so they can be named, not followed.
  const std::pair<const char*, std::size_t> hints[] = {
      {"cgaClusterSize", offsetof(ncclConfig_t, cgaClusterSize)},
      {"minCTAs", offsetof(ncclConfig_t, minCTAs)},
      {"maxCTAs", offsetof(ncclConfig_t, maxCTAs)},
      {"trafficClass", offsetof(ncclConfig_t, trafficClass)},
      {"collnetEnable", offsetof(ncclConfig_t, collnetEnable)},
      {"CTAPolicy", offsetof(ncclConfig_t, CTAPolicy)},
      {"shrinkShare", offsetof(ncclConfig_t, shrinkShare)},
      {"nvlsCTAs", offsetof(ncclConfig_t, nvlsCTAs)},
      {"nChannelsPerNetPeer", offsetof(ncclConfig_t, nChannelsPerNetPeer)},
      {"nvlinkCentricSched", offsetof(ncclConfig_t, nvlinkCentricSched)},
  };
  for (const auto& [name, offset] : hints) {
    const int value = field<int>(raw, size, offset, NCCL_CONFIG_UNDEF_INT);
    if (value != NCCL_CONFIG_UNDEF_INT) result.ignored.push_back(fmt::format("{}={}", name, value));
  }
  const std::string net = boundedText(field<const char*>(raw, size, offsetof(ncclConfig_t, netName), nullptr));
  if (!net.empty()) result.ignored.push_back("netName=" + net);
  return result;
}

std::string describeConfig(const CommConfig& config) {
  std::string text = config.blocking ? "blocking" : "non-blocking (served blocking)";
  if (!config.name.empty()) text += fmt::format(", name '{}'", config.name);
  if (config.size == 0) return text + ", no config";
  text += fmt::format(", NCCL {}'s {}-byte config", versionText(static_cast<int>(config.version)), config.size);
  if (config.newerFields) text += fmt::format(" (fields past {} bytes ignored)", sizeof(ncclConfig_t));
  if (!config.ignored.empty()) text += fmt::format("; ignored: {}", fmt::join(config.ignored, ", "));
  return text;
}

}  // namespace peerlink::nccl
