#include "transport/pattern_check.hpp"

#include "core/cuda_check.hpp"
#include "kernels/pattern_kernels.cuh"

namespace peerlink {

PatternChecker::PatternChecker(int device) : device_(device), counters_(device, 3 * sizeof(unsigned long long)) {}

CheckResult PatternChecker::checkPattern(const void* data, std::size_t bytes, std::uint64_t seed, cudaStream_t stream) {
  DeviceGuard guard(device_);
  auto* counters = static_cast<unsigned long long*>(counters_.data());
  const unsigned long long initial[3] = {0, ~0ull, 0};
  PEERLINK_CUDA_CHECK(cudaMemcpyAsync(counters, initial, sizeof(initial), cudaMemcpyHostToDevice, stream));
  kernels::launchCheckPattern(data, bytes, seed, counters, counters + 1, stream, counters + 2, kPoisonByte);
  return read(stream);
}

CheckResult PatternChecker::checkByte(const void* data, std::size_t bytes, std::uint8_t value, cudaStream_t stream) {
  DeviceGuard guard(device_);
  auto* counters = static_cast<unsigned long long*>(counters_.data());
  const unsigned long long initial[3] = {0, ~0ull, 0};
  PEERLINK_CUDA_CHECK(cudaMemcpyAsync(counters, initial, sizeof(initial), cudaMemcpyHostToDevice, stream));
  kernels::launchCheckByte(data, bytes, value, counters, counters + 1, stream);
  return read(stream);
}

CheckResult PatternChecker::read(cudaStream_t stream) {
  unsigned long long result[3] = {0, 0, 0};
  PEERLINK_CUDA_CHECK(cudaMemcpyAsync(result, counters_.data(), sizeof(result), cudaMemcpyDeviceToHost, stream));
  PEERLINK_CUDA_CHECK(cudaStreamSynchronize(stream));
  return {result[0], result[1], result[2]};
}

}  // namespace peerlink
