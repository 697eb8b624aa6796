#include "core/cuda_check.hpp"
#include "kernels/kernel_preload.cuh"
#include "kernels/pattern_kernels.cuh"

namespace peerlink::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

// splitmix64 of (seed, word index), one byte per position: fast, and no two nearby bytes repeat.
__host__ __device__ inline std::uint8_t hashByte(std::uint64_t seed, std::uint64_t k) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * ((k >> 3) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<std::uint8_t>(z >> (8 * (k & 7)));
}

int blocksFor(std::size_t bytes) {
  const std::size_t blocks = (bytes + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < kMaxBlocks ? (blocks > 0 ? blocks : 1) : kMaxBlocks);
}

__global__ void fillPatternKernel(std::uint8_t* data, std::size_t bytes, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < bytes; k += stride) {
    data[k] = hashByte(seed, k);
  }
}

__global__ void fillByteKernel(std::uint8_t* data, std::size_t bytes, std::uint8_t value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < bytes; k += stride) {
    data[k] = value;
  }
}

// In pattern mode `value` is the destination's poison: a wrong byte that still holds it, or reads 0x00 or
// 0xFF (what a dropped PCIe read completes with), counts as lost as well when `lost` is given.
template <bool kPattern>
__global__ void checkKernel(const std::uint8_t* data, std::size_t bytes, std::uint64_t seed, std::uint8_t value,
                            unsigned long long* mismatches, unsigned long long* firstMismatch,
                            unsigned long long* lost) {
  unsigned long long local = 0;
  unsigned long long localLost = 0;
  unsigned long long first = ~0ull;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < bytes; k += stride) {
    const std::uint8_t expected = kPattern ? hashByte(seed, k) : value;
    const std::uint8_t actual = data[k];
    if (actual != expected) {
      ++local;
      if (k < first) first = k;
      if (kPattern && (actual == value || actual == 0x00 || actual == 0xFF)) ++localLost;
    }
  }
  if (local != 0) {
    atomicAdd(mismatches, local);
    atomicMin(firstMismatch, first);
    if (lost != nullptr && localLost != 0) atomicAdd(lost, localLost);
  }
}

}  // namespace

namespace detail {

void preloadPatternKernels() {
  loadKernel(fillPatternKernel, "fillPatternKernel");
  loadKernel(fillByteKernel, "fillByteKernel");
  loadKernel(checkKernel<true>, "checkKernel<pattern>");
  loadKernel(checkKernel<false>, "checkKernel<byte>");
}

}  // namespace detail

std::uint8_t patternByte(std::uint64_t seed, std::size_t k) noexcept {
  return hashByte(seed, k);
}

void launchFillPattern(void* data, std::size_t bytes, std::uint64_t seed, cudaStream_t stream) {
  if (bytes == 0) return;
  fillPatternKernel<<<blocksFor(bytes), kThreads, 0, stream>>>(static_cast<std::uint8_t*>(data), bytes, seed);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

void launchFillByte(void* data, std::size_t bytes, std::uint8_t value, cudaStream_t stream) {
  if (bytes == 0) return;
  fillByteKernel<<<blocksFor(bytes), kThreads, 0, stream>>>(static_cast<std::uint8_t*>(data), bytes, value);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

void launchCheckPattern(const void* data, std::size_t bytes, std::uint64_t seed, unsigned long long* mismatches,
                        unsigned long long* firstMismatch, cudaStream_t stream, unsigned long long* lost,
                        std::uint8_t poison) {
  if (bytes == 0) return;
  checkKernel<true><<<blocksFor(bytes), kThreads, 0, stream>>>(static_cast<const std::uint8_t*>(data), bytes, seed,
                                                               poison, mismatches, firstMismatch, lost);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

void launchCheckByte(const void* data, std::size_t bytes, std::uint8_t value, unsigned long long* mismatches,
                     unsigned long long* firstMismatch, cudaStream_t stream) {
  if (bytes == 0) return;
  checkKernel<false><<<blocksFor(bytes), kThreads, 0, stream>>>(static_cast<const std::uint8_t*>(data), bytes, 0, value,
                                                                mismatches, firstMismatch, nullptr);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

}  // namespace peerlink::kernels
