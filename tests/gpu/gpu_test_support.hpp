// Shared by gpu tests: skip (never pass silently) when the machine lacks what a test needs.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <string>

namespace peerlink::testing {

/// Number of CUDA devices, or 0 with `why` set to the reason there are none.
inline int cudaDevices(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    *why = std::string("no CUDA GPU: cudaGetDeviceCount returned ") + cudaGetErrorName(status);
    return 0;
  }
  if (count == 0) *why = "no CUDA GPU: cudaGetDeviceCount returned 0";
  return count;
}

}  // namespace peerlink::testing

/// Skips the test with the reason unless at least `n` GPUs are present.
#define PEERLINK_REQUIRE_GPUS(n)                                                                      \
  do {                                                                                                \
    std::string peerlink_why_;                                                                        \
    const int peerlink_count_ = ::peerlink::testing::cudaDevices(&peerlink_why_);                     \
    if (peerlink_count_ == 0) GTEST_SKIP() << peerlink_why_;                                          \
    if (peerlink_count_ < (n)) GTEST_SKIP() << "needs " << (n) << " GPUs, found " << peerlink_count_; \
  } while (0)
