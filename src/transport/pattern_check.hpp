// Verification of transfers on the GPU that owns the destination: fill the source with a pattern,
// poison the destination and its guard bytes, copy, then count wrong bytes where they live.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "peerlink/cuda.hpp"

namespace peerlink {

/// The poison written around and into destinations before a verified transfer.
inline constexpr std::uint8_t kPoisonByte = 0xA5;

struct CheckResult {
  std::uint64_t mismatches = 0;
  std::uint64_t firstMismatch = UINT64_MAX;  ///< byte index of the first wrong byte, UINT64_MAX when none
  std::uint64_t lostBytes = 0;               ///< checkPattern: wrong bytes still holding kPoisonByte, or 0x00 / 0xFF
  bool ok() const noexcept { return mismatches == 0; }
};

/// Counts wrong bytes on `device`, synchronously on `stream` (a stream of `device`).
class PatternChecker {
 public:
  explicit PatternChecker(int device);
  /// Bytes of `data` that are not pattern `seed`.
  CheckResult checkPattern(const void* data, std::size_t bytes, std::uint64_t seed, cudaStream_t stream);
  /// Bytes of `data` that are not `value`.
  CheckResult checkByte(const void* data, std::size_t bytes, std::uint8_t value, cudaStream_t stream);

 private:
  CheckResult read(cudaStream_t stream);
  int device_;
  DeviceBuffer counters_;  // [mismatches, firstMismatch, lost]
};

}  // namespace peerlink
