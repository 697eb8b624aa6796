// Copies between barriers (CollCopyArgs): broadcast, all-gather, all-to-all and send/recv. Jobs are cut in
// chunks of args.chunkBytes (64 KiB, less for medium messages so they still reach every SM) and the chunks of all jobs
// interleaved (chunk c is chunk c / njobs of job c % njobs), so the blocks working at any moment pull from every peer
// at once, not one link after another. Each block copies its chunk with kUnroll accesses in flight per thread, at the
// widest unit (16 bytes when every pointer and the size allow), storing every loaded unit to each of the job's
// destinations.
#include <algorithm>

#include "core/cuda_check.hpp"
#include "kernels/coll_device.cuh"
#include "kernels/coll_kernels.cuh"
#include "kernels/host_ring.cuh"
#include "kernels/kernel_preload.cuh"
#include "kernels/launch_kernel.cuh"
#include "kernels/plan_barrier.cuh"
#include "kernels/plan_p2p.cuh"
#include "kernels/plan_reduce.cuh"
#include "kernels/plan_run.cuh"

namespace peerlink::kernels {
namespace {

using namespace colldev;

constexpr int kCopyThreads = 512;
constexpr int kUnroll = 4;

template <typename T>
__device__ __forceinline__ void copyChunk(const CollCopyJob& job, std::size_t offset, std::size_t bytes) {
  const T* src = reinterpret_cast<const T*>(static_cast<const unsigned char*>(job.src) + offset);
  const std::size_t units = bytes / sizeof(T);
  const std::size_t threads = blockDim.x;
  for (std::size_t i = threadIdx.x; i < units; i += threads * kUnroll) {
    T v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (i + u * threads < units) v[u] = src[i + u * threads];
    }
#pragma unroll
    for (int k = 0; k < kCollMaxRanks; ++k) {
      if (k >= job.ndst) break;
      T* dst = reinterpret_cast<T*>(static_cast<unsigned char*>(job.dst[k]) + offset);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (i + u * threads < units) dst[i + u * threads] = v[u];
      }
    }
  }
}

// The widest unit at which the job's source, destinations and size are all aligned.
__device__ __forceinline__ int unitOf(const CollCopyJob& job) {
  uintptr_t bits = reinterpret_cast<uintptr_t>(job.src) | job.bytes;
#pragma unroll
  for (int k = 0; k < kCollMaxRanks; ++k) {
    if (k < job.ndst) bits |= reinterpret_cast<uintptr_t>(job.dst[k]);
  }
  for (int unit = 16; unit > 1; unit /= 2) {
    if (bits % static_cast<uintptr_t>(unit) == 0) return unit;
  }
  return 1;
}

__device__ __forceinline__ void copyJobs(const CollCopyArgs& args) {
  std::size_t maxChunks = 0;
  for (int j = 0; j < args.njobs; ++j) {
    maxChunks = max(maxChunks, (args.jobs[j].bytes + args.chunkBytes - 1) / args.chunkBytes);
  }
  const std::size_t total = maxChunks * static_cast<std::size_t>(args.njobs);
  for (std::size_t c = blockIdx.x; c < total; c += gridDim.x) {
    const CollCopyJob& job = args.jobs[c % static_cast<std::size_t>(args.njobs)];
    const std::size_t offset = c / static_cast<std::size_t>(args.njobs) * args.chunkBytes;
    if (offset >= job.bytes || job.ndst == 0) continue;
    const std::size_t bytes = min(args.chunkBytes, job.bytes - offset);
    switch (unitOf(job)) {
      case 16: copyChunk<uint4>(job, offset, bytes); break;
      case 8: copyChunk<uint2>(job, offset, bytes); break;
      case 4: copyChunk<unsigned int>(job, offset, bytes); break;
      case 2: copyChunk<unsigned short>(job, offset, bytes); break;
      default: copyChunk<unsigned char>(job, offset, bytes); break;
    }
  }
}

__global__ void __launch_bounds__(kCopyThreads, 1) collCopyKernel(const __grid_constant__ CollCopyArgs args) {
  __shared__ KernelNumbers numbers;
  readNumbers(args.sync, &numbers);
  const int start = args.sync.p2p ? kPhaseP2pStart : kPhaseStart;
  const int end = args.sync.p2p ? kPhaseP2pEnd : kPhaseEnd;
  if (blockBarrier(args.sync, numbers, start, kStepStartBarrier, BarrierAt::Start)) {
    copyJobs(args);
    blockBarrier(args.sync, numbers, end, kStepEndBarrier, BarrierAt::End);
  }
  finishKernel(args.sync, numbers);
}

}  // namespace

const char* collStepName(int step) noexcept {
  switch (step) {
    case kStepStartBarrier: return "start barrier";
    case kStepEndBarrier: return "end barrier";
    case kStepLlData: return "LL data";
    case kStepPushData: return "push data";
    case kStepRingData: return "ring data";
    case kStepRingFree: return "ring stage free";
    case kStepRingStart: return "ring start";
    case kStepRingEnd: return "ring end";
    case kStepRingStage: return "ring stage";
    case kStepRingPace: return "ring pace";
    case kStepPlanBarrier: return "plan step barrier";
    case kStepPlanCallMismatch: return "plan call check";
    case kStepPlanSendRecv: return "staged send/recv";
    case kStepHostRing: return "host ring";
    case kStepArenaRing: return "arena ring";
    default: return "unknown step";
  }
}

void launchCollCopy(const CollCopyArgs& args, int blocks, cudaStream_t stream, const KernelLaunch& launch) {
  detail::launchKernel(collCopyKernel, blocks, kCopyThreads, stream, args, launch);
}

void preloadCollKernels(bool push, bool ll128) {
  detail::loadKernel(collCopyKernel, "collCopyKernel");
  detail::preloadCollReduceKernels();
  detail::preloadCollLlKernels();
  detail::preloadCollP2pLlKernels();
  if (ll128) detail::preloadCollLl128Kernels();
  detail::preloadCollRingKernels();
  detail::preloadCollRingReduceKernels();
  if (push) detail::preloadCollPushPhasedKernels();
  detail::preloadPlanReduceKernels();
  detail::preloadPlanBarrierKernels();
  detail::preloadPlanRunKernels();
  detail::preloadHostRingKernels();
  detail::preloadPlanP2pKernels();
}

}  // namespace peerlink::kernels
