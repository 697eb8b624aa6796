// The SM copy kernel: plain loads from src, plain stores to dst, either of them a peer GPU's memory.
//
// Cache hints (CopyHint::Streaming, the default): every byte is touched once, so caching gains nothing.
// Loads are ld.global.nc (LDG.CONSTANT, the read-only path): memcpy semantics already promise that src does
// not change while the kernel runs, and the promise lets loads issue ahead of earlier stores. Stores are
// st.global.cs (STG.EF, evict-first): a large copy then displaces less of the destination L2's working set
// (whatever else runs on that GPU) with lines that only go on to DRAM. The peer's L2 sits in front of its
// memory either way, so neither hint changes NVLink traffic; expect Plain within noise, kept to measure it.
#include <string>

#include "core/cuda_check.hpp"
#include "kernels/copy_device.cuh"
#include "kernels/copy_kernels.cuh"
#include "kernels/kernel_preload.cuh"
#include "peerlink/error.hpp"

namespace peerlink::kernels {
namespace {

template <CopyHint H, typename T, int U>
__global__ void __launch_bounds__(1024) smCopyKernel(void* dst, const void* src, size_t bytes) {
  const size_t threads = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  detail::copyRange<H, T, U>(dst, src, bytes, tid, threads);
}

struct Launch {
  void* dst;
  const void* src;
  size_t bytes;
  int smCount;
  int threads;
  int blocksPerSm;
  cudaStream_t stream;
};

template <CopyHint H, typename T, int U>
void launchTyped(const Launch& launch) {
  const auto kernel = smCopyKernel<H, T, U>;
  const size_t perBlock = static_cast<size_t>(launch.threads) * U * sizeof(T);
  const size_t needed = launch.bytes / perBlock + 1;
  size_t blocks = static_cast<size_t>(launch.smCount);
  if (needed > blocks) {  // the occupancy query only matters when the copy can fill more than one block per SM
    int perSm = launch.blocksPerSm;
    if (perSm <= 0) {
      PEERLINK_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, launch.threads, 0));
      if (perSm < 1) perSm = 1;
    }
    blocks *= static_cast<size_t>(perSm);
  }
  if (needed < blocks) blocks = needed;
  kernel<<<static_cast<unsigned int>(blocks), static_cast<unsigned int>(launch.threads), 0, launch.stream>>>(
      launch.dst, launch.src, launch.bytes);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

template <CopyHint H, int U>
void launchUnrolled(const Launch& launch) {
  detail::withUnitType(detail::unitBytes(launch.dst, launch.src), [&](auto unit) {
    using T = decltype(unit);
    launchTyped<H, T, U>(launch);
  });
}

template <CopyHint H>
void launchHinted(const Launch& launch, int unroll) {
  if (unroll == 4) {
    launchUnrolled<H, 4>(launch);
  } else {
    launchUnrolled<H, 8>(launch);
  }
}

template <CopyHint H, int U>
void preloadUnrolled() {
  for (const int unit : {16, 8, 4, 2, 1}) {
    detail::withUnitType(unit, [](auto element) {
      using T = decltype(element);
      detail::loadKernel(smCopyKernel<H, T, U>, "smCopyKernel");
    });
  }
}

}  // namespace

namespace detail {

void preloadCopyKernels() {
  preloadUnrolled<CopyHint::Plain, 4>();
  preloadUnrolled<CopyHint::Plain, 8>();
  preloadUnrolled<CopyHint::Streaming, 4>();
  preloadUnrolled<CopyHint::Streaming, 8>();
}

}  // namespace detail

const char* copyHintName(CopyHint hint) noexcept {
  return hint == CopyHint::Plain ? "plain" : "streaming";
}

void launchSmCopy(void* dst, const void* src, size_t bytes, int smCount, cudaStream_t stream,
                  const SmCopyConfig& config) {
  if (bytes == 0) return;
  if (dst == nullptr || src == nullptr) {
    throw Error(ErrorCode::InvalidUsage, "launchSmCopy: null " + std::string(dst == nullptr ? "dst" : "src") +
                                             " for a copy of " + std::to_string(bytes) + " bytes");
  }
  if (config.unroll != 4 && config.unroll != 8) {
    throw Error(ErrorCode::InvalidUsage, "launchSmCopy: unroll must be 4 or 8, not " + std::to_string(config.unroll));
  }
  if (config.threadsPerBlock < 32 || config.threadsPerBlock > 1024 || config.threadsPerBlock % 32 != 0) {
    throw Error(ErrorCode::InvalidUsage, "launchSmCopy: threadsPerBlock must be a multiple of 32 in [32, 1024], not " +
                                             std::to_string(config.threadsPerBlock));
  }
  if (smCount <= 0) {
    int device = 0;
    PEERLINK_CUDA_CHECK(cudaGetDevice(&device));
    PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&smCount, cudaDevAttrMultiProcessorCount, device));
  }
  const Launch launch{dst, src, bytes, smCount, config.threadsPerBlock, config.blocksPerSm, stream};
  if (config.hint == CopyHint::Plain) {
    launchHinted<CopyHint::Plain>(launch, config.unroll);
  } else {
    launchHinted<CopyHint::Streaming>(launch, config.unroll);
  }
}

}  // namespace peerlink::kernels
