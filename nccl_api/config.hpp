// ncclConfig_t read the way NCCL reads it: by its size, magic and version, so callers built against older
// and newer nccl.h both work. The struct has grown field by field since NCCL 2.14 (80 bytes in 2.28, 96 in
// 2.30); a field is read when the caller's size covers it, newer fields the caller sends are ignored, and
// every field left out keeps its default. Pure: reads the caller's bytes only.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <string>
#include <variant>
#include <vector>

#include "nccl_api/result.hpp"

namespace peerlink::nccl {

inline constexpr unsigned kConfigMagic = 0xcafebeef;  ///< NCCL_CONFIG_INITIALIZER's magic
/// The smallest ncclConfig_t there has been (NCCL 2.14: size, magic, version, blocking, three CTA fields and
/// netName); anything smaller is not a config.
inline constexpr std::size_t kMinConfigBytes = 40;
/// Larger than any config: a size beyond it is garbage, not a newer NCCL.
inline constexpr std::size_t kMaxConfigBytes = 4096;

/// What peerlink takes from a config. Performance hints for NCCL's own kernels (CTA counts, CGA clusters,
/// network, traffic class...) do not apply to peerlink's and are listed in `ignored` when set.
struct CommConfig {
  bool blocking = true;              ///< config.blocking; peerlink completes every call before returning either way
  std::string name;                  ///< config.commName, for logs ("" when unset)
  int splitShare = 0;                ///< config.splitShare (0/1; peerlink's split never shares resources)
  unsigned version = 0;              ///< the caller's NCCL_VERSION_CODE (0 without a config)
  std::size_t size = 0;              ///< the caller's sizeof(ncclConfig_t) (0 without a config)
  std::vector<std::string> ignored;  ///< "maxCTAs=16": hints set that peerlink does not follow
  bool newerFields = false;          ///< the caller's struct is longer than NCCL 2.28's
};

/// The config behind `config` (NULL: defaults), or a Failure (ncclInvalidArgument) naming what is wrong: a magic
/// that is not NCCL_CONFIG_INITIALIZER's, a size outside [kMinConfigBytes, kMaxConfigBytes], a version older
/// than 2.14 that claims a config, or a field out of range (blocking other than 0/1).
std::variant<CommConfig, Failure> readCommConfig(const ncclConfig_t* config);

/// "blocking, name 'pg0', NCCL 2.28.9's 80-byte config; ignored: maxCTAs=16" for the INIT log.
std::string describeConfig(const CommConfig& config);

/// "2.28.9" for 22809 (and 2.8.4 for the old encoding's 2804).
std::string versionText(int code);

}  // namespace peerlink::nccl
