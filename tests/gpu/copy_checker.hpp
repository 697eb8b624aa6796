// Checks one copy kernel launch at a time: a random source on one GPU, a destination on another (or the same)
// poisoned with guard bytes on both sides, the kernel run on the placement's executing GPU, everything
// checked on the host. The kernel-level gpu tests share it; each passes its own launch.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gpu_test_buffers.hpp"

namespace peerlink::testing {

/// Where the buffers live and which GPU runs the kernel.
struct CopyPlacement {
  const char* name;
  int srcDevice, dstDevice, executing;
};
inline constexpr CopyPlacement kLocalCopy{"local", 0, 0, 0};
inline constexpr CopyPlacement kWriteCopy{"write 0->1 (run on 0)", 0, 1, 0};
inline constexpr CopyPlacement kReadCopy{"read 0->1 (run on 1)", 0, 1, 1};

inline constexpr unsigned char kCopyPoison = 0xA5;
inline constexpr std::size_t kCopyGuard = 64;      // poisoned bytes checked on each side of the destination range
inline constexpr std::size_t kCopyMaxOffset = 17;  // offsets 0..17 on both sides

/// (dst, src, bytes, stream), called with the executing GPU current.
using CopyLaunch = std::function<void(void* dst, const void* src, std::size_t bytes, cudaStream_t stream)>;

class CopyChecker {
 public:
  CopyChecker(const CopyPlacement& placement, std::size_t maxBytes, std::uint64_t seed)
      : placement_(placement),
        hostSource_(randomBytes(maxBytes + kCopyMaxOffset, seed)),
        source_(uploaded(placement.srcDevice, hostSource_)),
        destination_(placement.dstDevice, maxBytes + kCopyMaxOffset + 2 * kCopyGuard),
        readBack_(destination_.size()),
        stream_(placement.executing) {}

  /// Copies `bytes` from source+srcOffset to destination+guard+dstOffset with `launch`; returns "" or what
  /// went wrong, naming the placement, the size, the offsets and `variant` (the launch's configuration).
  std::string check(std::size_t bytes, std::size_t srcOffset, std::size_t dstOffset, const std::string& variant,
                    const CopyLaunch& launch) {
    const std::size_t span = bytes + kCopyMaxOffset + 2 * kCopyGuard;
    on(placement_.dstDevice, [&] {
      PEERLINK_CUDA_CHECK(cudaMemset(destination_.data(), kCopyPoison, span));
      PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
    });
    auto* dst = static_cast<unsigned char*>(destination_.data()) + kCopyGuard + dstOffset;
    const auto* src = static_cast<const unsigned char*>(source_.data()) + srcOffset;
    on(placement_.executing, [&] { launch(dst, src, bytes, stream_.get()); });
    if (!finishes(stream_.get(), 10)) return "the copy kernel did not finish in 10 s";
    PEERLINK_CUDA_CHECK(cudaMemcpy(readBack_.data(), destination_.data(), span, cudaMemcpyDeviceToHost));
    const auto* got = static_cast<const unsigned char*>(readBack_.data());
    const std::size_t begin = kCopyGuard + dstOffset;
    const std::size_t end = begin + bytes;
    const std::string what = std::string(placement_.name) + " " + std::to_string(bytes) + " B, src+" +
                             std::to_string(srcOffset) + " dst+" + std::to_string(dstOffset) + ", " + variant;
    if (std::memcmp(got + begin, hostSource_.data() + srcOffset, bytes) != 0) {
      std::size_t i = 0;
      while (got[begin + i] == hostSource_[srcOffset + i]) ++i;
      return what + ": data byte " + std::to_string(i) + " is " + std::to_string(got[begin + i]) + ", expected " +
             std::to_string(hostSource_[srcOffset + i]);
    }
    for (std::size_t i = 0; i < span; i = i + 1 == begin ? end : i + 1) {  // the guard bytes only
      if (got[i] != kCopyPoison) return what + ": guard byte " + std::to_string(i) + " of the span written";
    }
    return "";
  }

 private:
  CopyPlacement placement_;
  std::vector<unsigned char> hostSource_;
  DeviceBuffer source_;
  DeviceBuffer destination_;
  PinnedBuffer readBack_;
  Stream stream_;
};

}  // namespace peerlink::testing
