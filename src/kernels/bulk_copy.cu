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
#include <map>
#include <mutex>
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
  waitStoresDone();  // the writes complete, not only read out of shared memory, before the block exits
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

// What launches need of a device: read, and the kernel's shared-memory limits raised there (per-device
// attributes), at the first use of the device; the occupancy of each shared-memory size at its first use.
// Cached because the calls would otherwise run before every launch, while the stream may wait on the host.
struct DeviceInfo {
  int major = 0, minor = 0, sms = 0, sharedLimit = 0;
  std::map<size_t, int> fit;  // blocks per SM by dynamic shared memory per block
};

std::mutex infoMutex;
std::map<int, DeviceInfo> infos;

// The current device's entry; the caller holds infoMutex.
DeviceInfo& currentInfo(int* device) {
  PEERLINK_CUDA_CHECK(cudaGetDevice(device));
  const auto known = infos.find(*device);
  if (known != infos.end()) return known->second;
  DeviceInfo info;
  PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&info.major, cudaDevAttrComputeCapabilityMajor, *device));
  PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&info.minor, cudaDevAttrComputeCapabilityMinor, *device));
  PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&info.sms, cudaDevAttrMultiProcessorCount, *device));
  PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&info.sharedLimit, cudaDevAttrMaxSharedMemoryPerBlockOptin, *device));
  if (info.major >= 9) {
    PEERLINK_CUDA_CHECK(
        cudaFuncSetAttribute(bulkCopyKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, info.sharedLimit));
    PEERLINK_CUDA_CHECK(cudaFuncSetAttribute(bulkCopyKernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                             cudaSharedmemCarveoutMaxShared));
  }
  return infos.emplace(*device, info).first->second;
}

struct Plan {
  size_t shared;  // dynamic shared memory per block
  int blocksPerSm;
  int sms;
};

// Checks `config` on the current device and plans its launch there.
Plan plan(const SmCopyConfig& config, const char* caller) {
  const std::lock_guard<std::mutex> lock(infoMutex);
  int device = 0;
  DeviceInfo& info = currentInfo(&device);
  const std::string where = std::string(caller) + ": ";
  if (info.major < 9) {
    throw Error(ErrorCode::Unsupported, where + "GPU " + std::to_string(device) + " has compute capability " +
                                            std::to_string(info.major) + "." + std::to_string(info.minor) +
                                            "; bulk copies need 9.0");
  }
  if (config.bulkChunkBytes < 1024 || config.bulkChunkBytes % 1024 != 0) {
    throw Error(ErrorCode::InvalidUsage, where + "bulkChunkBytes must be a positive multiple of 1024, not " +
                                             std::to_string(config.bulkChunkBytes));
  }
  if (config.bulkStages < 2 || config.bulkStages > 4) {
    throw Error(ErrorCode::InvalidUsage,
                where + "bulkStages must be 2, 3 or 4, not " + std::to_string(config.bulkStages));
  }
  const size_t stages = static_cast<size_t>(config.bulkStages);
  const size_t shared = stages * static_cast<size_t>(config.bulkChunkBytes) + stages * sizeof(uint64_t);
  if (shared > static_cast<size_t>(info.sharedLimit)) {
    throw Error(ErrorCode::InvalidUsage,
                where + std::to_string(config.bulkStages) + " stages of " + std::to_string(config.bulkChunkBytes) +
                    " bytes need " + std::to_string(shared) + " bytes of shared memory; GPU " + std::to_string(device) +
                    " gives a block " + std::to_string(info.sharedLimit));
  }
  auto fit = info.fit.find(shared);
  if (fit == info.fit.end()) {
    int blocks = 0;
    PEERLINK_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, bulkCopyKernel, kThreads, shared));
    fit = info.fit.emplace(shared, std::max(blocks, 1)).first;
  }
  const int perSm = config.blocksPerSm > 0 ? std::min(config.blocksPerSm, fit->second) : fit->second;
  return Plan{shared, perSm, info.sms};
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
  return plan(config, "bulkCopyBlocksPerSm").blocksPerSm;
}

void launchBulkCopy(void* dst, const void* src, size_t bytes, int smCount, cudaStream_t stream,
                    const SmCopyConfig& config) {
  if (bytes == 0) return;
  if (dst == nullptr || src == nullptr) {
    throw Error(ErrorCode::InvalidUsage, "launchBulkCopy: null " + std::string(dst == nullptr ? "dst" : "src") +
                                             " for a copy of " + std::to_string(bytes) + " bytes");
  }
  const Plan launch = plan(config, "launchBulkCopy");
  const auto dstAddress = reinterpret_cast<uintptr_t>(dst);
  const size_t head = std::min<size_t>((kUnit - dstAddress % kUnit) % kUnit, bytes);
  const size_t units = (bytes - head) / kUnit;
  if ((dstAddress ^ reinterpret_cast<uintptr_t>(src)) % kUnit != 0 || units == 0) {
    launchSmCopy(dst, src, bytes, smCount, stream, config);
    return;
  }
  if (smCount <= 0) smCount = launch.sms;
  const size_t chunk = static_cast<size_t>(config.bulkChunkBytes);
  const size_t chunks = (units * kUnit + chunk - 1) / chunk;
  const size_t blocks = std::min(static_cast<size_t>(smCount) * static_cast<size_t>(launch.blocksPerSm), chunks);
  bulkCopyKernel<<<static_cast<unsigned int>(blocks), kThreads, launch.shared, stream>>>(
      static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), head, units,
      bytes - head - units * kUnit, static_cast<uint32_t>(chunk), config.bulkStages);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

}  // namespace peerlink::kernels
