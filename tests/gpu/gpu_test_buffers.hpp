// Helpers the kernel-level gpu tests share: host-side random data, device buffers filled, uploaded and
// downloaded, waits that cannot hang, and the GPU 0 <-> GPU 1 peer precondition.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda_check.hpp"
#include "gpu_test_support.hpp"
#include "peerlink/cuda.hpp"
#include "transport/peer_access.hpp"

namespace peerlink::testing {

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Polls the stream instead of blocking in cudaStreamSynchronize, so a stuck kernel fails the test.
inline bool finishes(cudaStream_t stream, double seconds) {
  const Clock::time_point start = Clock::now();
  for (;;) {
    const cudaError_t status = cudaStreamQuery(stream);
    if (status == cudaSuccess) return true;
    if (status != cudaErrorNotReady) PEERLINK_CUDA_CHECK(status);
    if (secondsSince(start) > seconds) return false;
  }
}

/// `n` bytes from a fixed-seed generator.
inline std::vector<unsigned char> randomBytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> bytes(n);
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t word = rng();
    std::memcpy(bytes.data() + i, &word, std::min<std::size_t>(8, n - i));
  }
  return bytes;
}

/// "" when GPUs 0 and 1 reach each other (and peer access is then enabled both ways), else why not.
inline std::string peersUnavailable() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) return "needs 2 GPUs";
  for (const auto& [from, to] : {std::pair{0, 1}, std::pair{1, 0}}) {
    int can = 0;
    PEERLINK_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
    if (!can) return "GPU " + std::to_string(from) + " cannot access GPU " + std::to_string(to) + " as a peer";
    // Through the library's record of enabled pairs, so communicators made after it do not ask the driver again
    // (which answers cudaErrorPeerAccessAlreadyEnabled, an API error to compute-sanitizer).
    PeerAccessTable().enable(from, to);
  }
  return "";
}

/// Runs fn with `device` current (kernels launch on the current device).
template <typename Fn>
void on(int device, Fn&& fn) {
  DeviceGuard guard(device);
  fn();
}

inline DeviceBuffer filled(int device, std::size_t bytes, int value) {
  DeviceBuffer buffer(device, bytes);
  DeviceGuard guard(device);
  PEERLINK_CUDA_CHECK(cudaMemset(buffer.data(), value, bytes));
  PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
  return buffer;
}

/// A cudaMemcpy from host to device that returns once the data has landed. A cudaMemcpy from pageable memory
/// returns once the data is staged, before the DMA ends, and runs on the legacy stream, which non-blocking
/// streams do not wait for: work queued on them at once could read the old contents.
inline void copyToDevice(void* dst, const void* src, std::size_t bytes) {
  PEERLINK_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  cudaPointerAttributes attributes{};
  PEERLINK_CUDA_CHECK(cudaPointerGetAttributes(&attributes, dst));
  DeviceGuard guard(attributes.device);
  PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
}

inline DeviceBuffer uploaded(int device, const std::vector<unsigned char>& bytes) {
  DeviceBuffer buffer(device, bytes.size());
  copyToDevice(buffer.data(), bytes.data(), bytes.size());
  return buffer;
}

inline std::vector<unsigned char> downloaded(const DeviceBuffer& buffer) {
  std::vector<unsigned char> bytes(buffer.size());
  PEERLINK_CUDA_CHECK(cudaMemcpy(bytes.data(), buffer.data(), bytes.size(), cudaMemcpyDeviceToHost));
  return bytes;
}

}  // namespace peerlink::testing

/// Skips unless GPUs 0 and 1 exist and can map each other (then peer access is on both ways).
#define PEERLINK_REQUIRE_PEERS_0_1()                                           \
  do {                                                                         \
    PEERLINK_REQUIRE_GPUS(2);                                                  \
    const std::string peerlink_why_ = ::peerlink::testing::peersUnavailable(); \
    if (!peerlink_why_.empty()) GTEST_SKIP() << peerlink_why_;                 \
  } while (0)
