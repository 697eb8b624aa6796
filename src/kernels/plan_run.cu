// The plan-run kernel (plan_run.cuh).
#include <cstring>

#include "core/cuda_check.hpp"
#include "kernels/coll_device.cuh"
#include "kernels/coll_reduce_ops.cuh"
#include "kernels/kernel_preload.cuh"
#include "kernels/plan_run.cuh"

namespace peerlink::kernels {
namespace {

using namespace colldev;

constexpr int kPlanRunThreads = 512;

// A released word with this bit set: the rank's meeting failed (recorded by block 0), every block stops.
constexpr unsigned long long kRunFailed = 1ull << 63;

// Loads that skip L1 and refetch host memory: a plan reuses its stage and scratch slots from step to step, and what a
// peer's GPU or another block stored there since would not be in a line this SM cached (ld.global.cv).
template <typename T>
__device__ __forceinline__ T loadFresh(const T* p) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "an element of 1-8 bytes");
  T value;
  if constexpr (sizeof(T) == 8) {
    const unsigned long long bits = __ldcv(reinterpret_cast<const unsigned long long*>(p));
    memcpy(&value, &bits, 8);
  } else if constexpr (sizeof(T) == 4) {
    const unsigned int bits = __ldcv(reinterpret_cast<const unsigned int*>(p));
    memcpy(&value, &bits, 4);
  } else if constexpr (sizeof(T) == 2) {
    const unsigned short bits = __ldcv(reinterpret_cast<const unsigned short*>(p));
    memcpy(&value, &bits, 2);
  } else {
    const unsigned char bits = __ldcv(reinterpret_cast<const unsigned char*>(p));
    memcpy(&value, &bits, 1);
  }
  return value;
}

// The threads that serve one transfer of a step: a step's transfers run side by side, each on its share of the
// blocks, so a step's copy to host memory and its copy back use both directions of the GPU's link at once.
struct Share {
  std::size_t first = 0;   // this thread's first element
  std::size_t stride = 0;  // the threads of the share
};

// Transfer i of a step of `m`: with m <= the grid, blocks b with b % m == i serve it; else block i % grid, alone.
__device__ __forceinline__ bool shareOf(int i, int m, Share* share) {
  const int grid = static_cast<int>(gridDim.x);
  const int block = static_cast<int>(blockIdx.x);
  int part = 0;
  int parts = 1;
  if (m <= grid) {
    if (block % m != i) return false;
    part = block / m;
    parts = (grid - i + m - 1) / m;
  } else if (i % grid != block) {
    return false;
  }
  share->first = static_cast<std::size_t>(part) * blockDim.x + threadIdx.x;
  share->stride = static_cast<std::size_t>(parts) * blockDim.x;
  return true;
}

// Loads of host memory take microseconds: each thread keeps kCopyUnroll 16-byte loads in flight.
constexpr int kCopyUnroll = 4;

__device__ void copyBytes(const Share& share, unsigned char* dst, const unsigned char* src, std::size_t bytes) {
  std::size_t done = 0;
  if (((reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src)) & 15) == 0) {
    const std::size_t lines = bytes / 16;
    auto* to = reinterpret_cast<uint4*>(dst);
    const auto* from = reinterpret_cast<const uint4*>(src);
    const std::size_t step = share.stride * kCopyUnroll;
    std::size_t i = share.first;
    for (; i + (kCopyUnroll - 1) * share.stride < lines; i += step) {
      uint4 v[kCopyUnroll];
#pragma unroll
      for (int u = 0; u < kCopyUnroll; ++u) v[u] = __ldcv(from + i + u * share.stride);
#pragma unroll
      for (int u = 0; u < kCopyUnroll; ++u) to[i + u * share.stride] = v[u];
    }
    for (; i < lines; i += share.stride) to[i] = __ldcv(from + i);
    done = lines * 16;
  }
  for (std::size_t i = done + share.first; i < bytes; i += share.stride) dst[i] = loadFresh(src + i);
}

// Sources a reduction loads before it adds them: independent loads of host memory in flight.
constexpr int kReduceLoads = 4;

template <int Type, int Op>
__device__ void reduceElements(const Share& share, const PlanRunArgs& args, const PlanRunOp& op) {
  using E = Elem<Type>;
  using S = typename E::S;
  using A = typename E::A;
  S* dst = static_cast<S*>(args.pointers[op.pointer]);
  void* const* srcs = &args.pointers[op.pointer + 1];
  const bool finish = (op.flags & kPlanRunFinish) != 0;
  std::uintptr_t addresses = reinterpret_cast<std::uintptr_t>(dst);
  for (int j = 0; j < op.sources; ++j) addresses |= reinterpret_cast<std::uintptr_t>(srcs[j]);
  std::size_t done = 0;
  if ((addresses & 15) == 0) {
    // 16-byte packs, each source's loads issued before any is added; the sources in order, as below.
    constexpr int kElems = static_cast<int>(16 / sizeof(S));
    union Pack {
      uint4 raw;
      S e[kElems];
    };
    const std::size_t packs = op.count / kElems;
    for (std::size_t p = share.first; p < packs; p += share.stride) {
      A acc[kElems];
      for (int first = 0; first < op.sources; first += kReduceLoads) {
        Pack in[kReduceLoads];
#pragma unroll
        for (int u = 0; u < kReduceLoads; ++u) {
          if (first + u < op.sources) in[u].raw = __ldcv(static_cast<const uint4*>(srcs[first + u]) + p);
        }
#pragma unroll
        for (int u = 0; u < kReduceLoads; ++u) {
          if (first + u >= op.sources) break;
#pragma unroll
          for (int e = 0; e < kElems; ++e) {
            acc[e] = first + u == 0 ? E::load(in[u].e[e]) : applyOp<A, Op>(acc[e], E::load(in[u].e[e]));
          }
        }
      }
      Pack out;
#pragma unroll
      for (int e = 0; e < kElems; ++e) out.e[e] = E::store(finish ? finishOp<A, Op>(acc[e], args.nranks) : acc[e]);
      reinterpret_cast<uint4*>(dst)[p] = out.raw;
    }
    done = packs * kElems;
  }
  for (std::size_t i = done + share.first; i < op.count; i += share.stride) {
    A acc = E::load(loadFresh(static_cast<const S*>(srcs[0]) + i));
    for (int j = 1; j < op.sources; ++j) {
      acc = applyOp<A, Op>(acc, E::load(loadFresh(static_cast<const S*>(srcs[j]) + i)));
    }
    dst[i] = E::store(finish ? finishOp<A, Op>(acc, args.nranks) : acc);
  }
}

// The blocks meet (two words of the rank's device memory), then block 0's first threads meet the peers (plan_barrier's
// protocol, barrier number `*count + 1`), then block 0 releases the others. `meeting` counts this run's meetings
// from 0; `base` is the released word as the run found it. False: the run stops (the stall is recorded).
__device__ bool meet(const PlanRunArgs& args, int meeting, unsigned long long base, int* failed,
                     unsigned long long* number) {
  auto* arrived = reinterpret_cast<volatile unsigned long long*>(args.grid);
  auto* released = reinterpret_cast<volatile unsigned long long*>(args.grid + 1);
  const unsigned long long release = base + static_cast<unsigned long long>(meeting) + 1;
  // Every thread's stores of the step -- into host memory, peers' memory or its own -- before its block arrives.
  __threadfence_system();
  __syncthreads();
  if (blockIdx.x != 0) {
    __shared__ int stop;
    if (threadIdx.x == 0) {
      stop = 0;
      atomicAdd(args.grid, 1ull);
      const Deadline deadline = Deadline::after(2 * args.barrier.timeoutNs);
      unsigned long long seen = *released;
      for (unsigned int polls = 1; seen < release && (seen & kRunFailed) == 0; ++polls) {
        if (polls % kPollsPerTimerRead == 0 && deadline.passed()) break;
        seen = *released;
      }
      if (seen < release || (seen & kRunFailed) != 0) stop = 1;
      // Released neither way before the deadline: block 0 never met the peers (it was not resident, or stalled
      // without recording). Block 1 says so, in place of a record block 0 cannot make.
      if (seen < release && (seen & kRunFailed) == 0 && blockIdx.x == 1) {
        recordPlanStall(args.barrier.failure, *args.barrier.count + 1, seen, release, PEERLINK_STATUS_TIMEOUT,
                        kStepPlanBarrier, args.barrier.rank, args.barrier.collective);
      }
      __threadfence();
    }
    __syncthreads();
    return stop == 0;
  }
  __shared__ int stopped;
  if (threadIdx.x == 0) {
    stopped = 0;
    const unsigned long long others = gridDim.x - 1;
    const Deadline deadline = Deadline::after(args.barrier.timeoutNs);
    unsigned long long seen = *arrived;
    for (unsigned int polls = 1; seen < others; ++polls) {
      if (polls % kPollsPerTimerRead == 0 && deadline.passed()) break;
      seen = *arrived;
    }
    if (seen < others) {  // a block of this grid never arrived: it was not resident
      stopped = 1;
      if (atomicExch(failed, 1) == 0) {
        recordPlanStall(args.barrier.failure, *args.barrier.count + 1, seen, others, PEERLINK_STATUS_TIMEOUT,
                        kStepPlanBarrier, args.barrier.rank, args.barrier.collective);
      }
    }
    *arrived = 0;  // no block arrives again before the release below
    *number = *args.barrier.count + 1;
    *args.barrier.count = *number;
  }
  __syncthreads();
  if (stopped == 0 && threadIdx.x < kCollMaxRanks) {
    PlanBarrierArgs barrier = args.barrier;
    if (meeting != 0) barrier.signature = 0;  // the call's signature travels with its first meeting only
    meetPlanPeers(barrier, *number, failed);
  }
  __syncthreads();
  const bool ok = stopped == 0 && *failed == 0;
  if (threadIdx.x == 0) {
    __threadfence();
    *released = ok ? release : (release | kRunFailed);
  }
  return ok;
}

template <int Type, int Op>
__global__ void __launch_bounds__(kPlanRunThreads) planRunKernel(PlanRunArgs args) {
  __shared__ unsigned long long base;
  __shared__ unsigned long long number;
  __shared__ int failed;
  if (threadIdx.x == 0) {
    // No block of this run can have been released yet: block 0 releases only once every block arrived.
    base = *reinterpret_cast<volatile unsigned long long*>(args.grid + 1) & ~kRunFailed;
    failed = 0;
  }
  __syncthreads();
  if (!meet(args, 0, base, &failed, &number)) return;
  int begin = 0;
  for (int s = 0; s < args.steps; ++s) {
    const int end = args.stepEnds[s];
    for (int i = begin; i < end; ++i) {
      Share share;
      if (!shareOf(i - begin, end - begin, &share)) continue;
      const PlanRunOp& op = args.ops[i];
      if ((op.flags & kPlanRunReduce) != 0) {
        reduceElements<Type, Op>(share, args, op);
      } else {
        copyBytes(share, static_cast<unsigned char*>(args.pointers[op.pointer]),
                  static_cast<const unsigned char*>(args.pointers[op.pointer + 1]),
                  static_cast<std::size_t>(op.count) * sizeof(typename Elem<Type>::S));
      }
    }
    begin = end;
    if (!meet(args, s + 1, base, &failed, &number)) return;
  }
}

}  // namespace

void launchPlanRun(const PlanRunArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream) {
  detail::dispatchTypeOp(type, op, [&](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    planRunKernel<kType, kOp><<<blocks, kPlanRunThreads, 0, stream>>>(args);
  });
  PEERLINK_CUDA_CHECK_LAUNCH();
}

namespace detail {

void preloadPlanRunKernels() {
  forEachTypeOp([](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    loadKernel(planRunKernel<kType, kOp>, "planRunKernel");
  });
}

}  // namespace detail
}  // namespace peerlink::kernels
