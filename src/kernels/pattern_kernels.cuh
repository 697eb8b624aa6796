// Verification patterns, generated and checked on the GPU that owns the memory: byte k of a transfer
// is a hash of (seed, k), so any offset, size or route can be checked without a host copy, and a
// poisoned destination's guard bytes can be checked to be untouched.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace peerlink::kernels {

/// Byte k of the pattern for `seed` (the host side of the same function, for tests).
std::uint8_t patternByte(std::uint64_t seed, std::size_t k) noexcept;

/// Writes pattern bytes 0..bytes-1 of `seed` to `data` (device memory of the current device).
void launchFillPattern(void* data, std::size_t bytes, std::uint64_t seed, cudaStream_t stream);

/// Sets `bytes` bytes of `data` to `value` (a poison such as 0xA5).
void launchFillByte(void* data, std::size_t bytes, std::uint8_t value, cudaStream_t stream);

/// Adds to `*mismatches` (device memory, zeroed by the caller) the number of bytes of `data` that differ
/// from the pattern of `seed`, and stores the first differing index in `*firstMismatch` (initialized by
/// the caller to UINT64_MAX) via atomicMin. With `lost`, also adds there the wrong bytes that never landed:
/// still `poison`, or 0x00 / 0xFF (what a dropped peer read returns).
void launchCheckPattern(const void* data, std::size_t bytes, std::uint64_t seed, unsigned long long* mismatches,
                        unsigned long long* firstMismatch, cudaStream_t stream, unsigned long long* lost = nullptr,
                        std::uint8_t poison = 0xA5);

/// Same for a constant byte (guard bytes that must still hold the poison).
void launchCheckByte(const void* data, std::size_t bytes, std::uint8_t value, unsigned long long* mismatches,
                     unsigned long long* firstMismatch, cudaStream_t stream);

}  // namespace peerlink::kernels
