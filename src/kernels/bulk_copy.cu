// The bulk-copy kernel (sm_90): one warp per block, whose lane 0 drives the SM's bulk copy unit through a
// ring of shared-memory stages. Global -> shared loads complete on one mbarrier per stage (expect_tx +
// complete_tx); shared -> global stores are bulk groups, and a stage is refilled only after its store has
// finished READING shared memory (cp.async.bulk.wait_group.read), not after its writes land, so writes to a
// peer stay in flight. Only the bulk copy unit touches the stages, so no proxy fence is needed between a
// load and the store of the same stage (the mbarrier wait orders them), nor between a store and the load
// that refills its stage (the wait_group.read does).
//
// Each block owns one contiguous, equal share of the 16-byte-aligned body (to 16 bytes), so the grid drains
// evenly; lanes of block 0 copy the head and tail bytes (fewer than 16 each) with plain accesses.
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/cuda_check.hpp"
#include "kernels/bulk_copy.cuh"
#include "kernels/kernel_preload.cuh"
#include "peerlink/error.hpp"

namespace peerlink::kernels {
namespace {

constexpr int kThreads = 32;
constexpr size_t kUnit = 16;  // bulk copies need 16-byte aligned addresses and sizes in multiples of 16

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ uint32_t sharedAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void initBarrier(uint32_t bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
}

// Arrives (the one expected arrival) and announces `bytes` of transactions; the phase completes when the
// load has delivered them.
__device__ __forceinline__ void load(uint32_t smem, const void* global, uint32_t bytes, uint32_t bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem),
               "l"(global), "r"(bytes), "r"(bar)
               : "memory");
}

__device__ __forceinline__ void waitPhase(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
  } while (done == 0);
}

__device__ __forceinline__ void store(void* global, uint32_t smem, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(global), "r"(smem), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

template <int N>
__device__ __forceinline__ void waitStoresRead() {  // all but the newest N store groups have read shared memory
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

__device__ __forceinline__ void waitStoresDone() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// Lane 0's pipeline over `bytes` (a multiple of 16) from src to dst. Stores leave in chunk order; after the
// store of chunk k, the stage of chunk k - lag is refilled with chunk k - lag + stages. lag 1 (3+ stages)
// lets two stores queue back to back, so a store to a peer never waits for the thread; lag 0 (2 stages)
// keeps a load in flight beside every store instead (with lag 1 it would have none).
__device__ void pipeline(unsigned char* dst, const unsigned char* src, size_t bytes, uint32_t chunk, int stages) {
  extern __shared__ __align__(128) unsigned char buffers[];
  const uint32_t base = sharedAddress(buffers);
  const uint32_t bars = base + static_cast<uint32_t>(stages) * chunk;
  for (int s = 0; s < stages; ++s) initBarrier(bars + 8u * static_cast<uint32_t>(s));
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the inits, before the async proxy sees them

  const size_t chunks = (bytes + chunk - 1) / chunk;
  const auto sizeOf = [&](size_t k) {
    return static_cast<uint32_t>(bytes - k * chunk < chunk ? bytes - k * chunk : chunk);
  };
  size_t loaded = 0;  // chunks whose load was issued; chunk k uses stage k % stages
  int loadStage = 0;
  const auto issueLoad = [&] {
    const uint32_t stage = static_cast<uint32_t>(loadStage);
    load(base + stage * chunk, src + loaded * chunk, sizeOf(loaded), bars + 8u * stage);
    ++loaded;
    loadStage = loadStage + 1 == stages ? 0 : loadStage + 1;
  };
  while (loaded < chunks && loaded < static_cast<size_t>(stages)) issueLoad();

  const size_t lag = stages >= 3 ? 1 : 0;
  uint32_t stage = 0, parity = 0;
  for (size_t k = 0; k < chunks; ++k) {
    waitPhase(bars + 8u * stage, parity);
    store(dst + k * chunk, base + stage * chunk, sizeOf(k));
    if (++stage == static_cast<uint32_t>(stages)) stage = 0, parity ^= 1u;
    if (k >= lag && loaded < chunks) {
      if (lag == 1) {
        waitStoresRead<1>();
      } else {
        waitStoresRead<0>();
      }
      issueLoad();
    }
  }
  waitStoresDone();
}
#endif

// Copies head bytes, then units x 16 bytes by bulk copies, then tail bytes; dst + head and src + head are
// 16-byte aligned.
__global__ void __launch_bounds__(kThreads) bulkCopyKernel(unsigned char* dst, const unsigned char* src, size_t head,
                                                           size_t units, size_t tail, uint32_t chunk, int stages) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (blockIdx.x == 0) {
    const size_t tailAt = head + units * kUnit;
    if (threadIdx.x < head) dst[threadIdx.x] = src[threadIdx.x];
    if (threadIdx.x < tail) dst[tailAt + threadIdx.x] = src[tailAt + threadIdx.x];
  }
  if (threadIdx.x != 0) return;
  const size_t share = units / gridDim.x, extra = units % gridDim.x, block = blockIdx.x;
  const size_t first = head + (block * share + (block < extra ? block : extra)) * kUnit;
  const size_t bytes = (share + (block < extra ? 1 : 0)) * kUnit;
  if (bytes > 0) pipeline(dst + first, src + first, bytes, chunk, stages);
#elif defined(__CUDA_ARCH__)
  __trap();  // the host launches it on compute capability 9.0+ only
#endif
}

int currentDevice() {
  int device = 0;
  PEERLINK_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

// Checks the bulk fields of `config` on the current device and raises the kernel's shared-memory limits
// there (a per-device attribute); returns the dynamic shared memory a block needs.
size_t prepare(const SmCopyConfig& config, const char* caller) {
  const int device = currentDevice();
  if (!bulkCopySupported(device)) {
    int major = 0, minor = 0;
    PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    throw Error(ErrorCode::Unsupported, std::string(caller) + ": GPU " + std::to_string(device) +
                                            " has compute capability " + std::to_string(major) + "." +
                                            std::to_string(minor) + "; bulk copies need 9.0");
  }
  if (config.bulkChunkBytes < 1024 || config.bulkChunkBytes % 1024 != 0) {
    throw Error(ErrorCode::InvalidUsage, std::string(caller) +
                                             ": bulkChunkBytes must be a positive multiple of "
                                             "1024, not " +
                                             std::to_string(config.bulkChunkBytes));
  }
  if (config.bulkStages < 2 || config.bulkStages > 4) {
    throw Error(ErrorCode::InvalidUsage,
                std::string(caller) + ": bulkStages must be 2, 3 or 4, not " + std::to_string(config.bulkStages));
  }
  const size_t stages = static_cast<size_t>(config.bulkStages);
  const size_t shared = stages * static_cast<size_t>(config.bulkChunkBytes) + stages * sizeof(uint64_t);
  int limit = 0;
  PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (shared > static_cast<size_t>(limit)) {
    throw Error(ErrorCode::InvalidUsage, std::string(caller) + ": " + std::to_string(config.bulkStages) +
                                             " stages of " + std::to_string(config.bulkChunkBytes) + " bytes need " +
                                             std::to_string(shared) + " bytes of shared memory; GPU " +
                                             std::to_string(device) + " gives a block " + std::to_string(limit));
  }
  PEERLINK_CUDA_CHECK(cudaFuncSetAttribute(bulkCopyKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
  PEERLINK_CUDA_CHECK(cudaFuncSetAttribute(bulkCopyKernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                           cudaSharedmemCarveoutMaxShared));
  return shared;
}

int blocksPerSm(const SmCopyConfig& config, size_t shared) {
  int fit = 0;
  PEERLINK_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, bulkCopyKernel, kThreads, shared));
  fit = std::max(fit, 1);
  return config.blocksPerSm > 0 ? std::min(config.blocksPerSm, fit) : fit;
}

}  // namespace

namespace detail {

void preloadBulkCopyKernels() {
  loadKernel(bulkCopyKernel, "bulkCopyKernel");
}

}  // namespace detail

bool bulkCopySupported(int device) {
  int major = 0;
  PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9;
}

int bulkCopyBlocksPerSm(const SmCopyConfig& config) {
  return blocksPerSm(config, prepare(config, "bulkCopyBlocksPerSm"));
}

void launchBulkCopy(void* dst, const void* src, size_t bytes, int smCount, cudaStream_t stream,
                    const SmCopyConfig& config) {
  if (bytes == 0) return;
  if (dst == nullptr || src == nullptr) {
    throw Error(ErrorCode::InvalidUsage, "launchBulkCopy: null " + std::string(dst == nullptr ? "dst" : "src") +
                                             " for a copy of " + std::to_string(bytes) + " bytes");
  }
  const size_t shared = prepare(config, "launchBulkCopy");
  const auto dstAddress = reinterpret_cast<uintptr_t>(dst);
  const size_t head = std::min<size_t>((kUnit - dstAddress % kUnit) % kUnit, bytes);
  const size_t units = (bytes - head) / kUnit;
  if ((dstAddress ^ reinterpret_cast<uintptr_t>(src)) % kUnit != 0 || units == 0) {
    launchSmCopy(dst, src, bytes, smCount, stream, config);
    return;
  }
  if (smCount <= 0) {
    PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&smCount, cudaDevAttrMultiProcessorCount, currentDevice()));
  }
  const size_t chunk = static_cast<size_t>(config.bulkChunkBytes);
  const size_t chunks = (units * kUnit + chunk - 1) / chunk;
  const size_t blocks =
      std::min(static_cast<size_t>(smCount) * static_cast<size_t>(blocksPerSm(config, shared)), chunks);
  bulkCopyKernel<<<static_cast<unsigned int>(blocks), kThreads, shared, stream>>>(
      static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), head, units,
      bytes - head - units * kUnit, static_cast<uint32_t>(chunk), config.bulkStages);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

}  // namespace peerlink::kernels
