// Direct-read reductions (CollReduceArgs): two-shot all-reduce and reduce, one-shot all-reduce beyond the
// LL size, reduce-scatter. One kernel, between a start and an end barrier: each thread loads 16-byte
// packs of every rank's input (kUnroll packs per rank in flight), reduces them in rank order and stores
// the result to every destination. Unaligned buffers and the tail go element by element.
#include <algorithm>

#include "core/cuda_check.hpp"
#include "kernels/coll_device.cuh"
#include "kernels/coll_kernels.cuh"
#include "kernels/coll_reduce_ops.cuh"
#include "kernels/kernel_preload.cuh"
#include "kernels/launch_kernel.cuh"

namespace peerlink::kernels {
namespace {

using namespace colldev;

constexpr int kReduceThreads = 512;
constexpr int kUnroll = 2;
constexpr std::size_t kReduceBytesPerBlock = std::size_t{16} << 10;

// Elements [from, to) one by one, spread over every thread of the grid.
template <int Type, int Op>
__device__ __forceinline__ void reduceElements(const CollReduceArgs& args, std::size_t from, std::size_t to) {
  using E = Elem<Type>;
  using S = typename E::S;
  using A = typename E::A;
  const int nranks = args.sync.nranks;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = from + static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < to; i += stride) {
    S v[kCollMaxRanks];
#pragma unroll
    for (int j = 0; j < kCollMaxRanks; ++j) {
      if (j < nranks) v[j] = static_cast<const S*>(args.src[j])[i];
    }
    A acc = E::load(v[0]);
#pragma unroll
    for (int j = 1; j < kCollMaxRanks; ++j) {
      if (j < nranks) acc = applyOp<A, Op>(acc, E::load(v[j]));
    }
    const S out = E::store(finishOp<A, Op>(acc, nranks));
#pragma unroll
    for (int k = 0; k < kCollMaxRanks; ++k) {
      if (k < args.ndst) static_cast<S*>(args.dst[k])[i] = out;
    }
  }
}

template <int Type>
__device__ __forceinline__ bool packAligned(const CollReduceArgs& args) {
  using S = typename Elem<Type>::S;
  uintptr_t bits = 0;
  for (int j = 0; j < args.sync.nranks; ++j)
    bits |= reinterpret_cast<uintptr_t>(static_cast<const S*>(args.src[j]) + args.begin);
  for (int k = 0; k < args.ndst; ++k)
    bits |= reinterpret_cast<uintptr_t>(static_cast<const S*>(args.dst[k]) + args.begin);
  return bits % 16 == 0;
}

// One unit of packs for this thread: packs p, p + stride, ... (kUnroll of them, those < packs), every load
// issued before any reduction; `afterLoads()` runs between (a claim's round trip hidden behind the loads').
template <int Type, int Op, typename AfterLoads>
__device__ __forceinline__ void reduceUnit(const CollReduceArgs& args, const uint4* const* src, std::size_t packs,
                                           std::size_t p, std::size_t stride, AfterLoads&& afterLoads) {
  using S = typename Elem<Type>::S;
  const int nranks = args.sync.nranks;
  uint4 v[kUnroll][kCollMaxRanks];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::size_t at = p + u * stride;
#pragma unroll
    for (int j = 0; j < kCollMaxRanks; ++j) {
      if (j < nranks && at < packs) v[u][j] = src[j][at];
    }
  }
  afterLoads();
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::size_t at = p + u * stride;
    if (at >= packs) continue;
    const uint4 out = reducePack<Type, Op>(v[u], nranks);
#pragma unroll
    for (int k = 0; k < kCollMaxRanks; ++k) {
      if (k < args.ndst) reinterpret_cast<uint4*>(static_cast<S*>(args.dst[k]) + args.begin)[at] = out;
    }
  }
}

// With CollReduceArgs::claim each warp runs units of kWarpUnitPacks packs: its first by its place in the
// grid, the rest claimed from this rank's counter as it goes, so faster warps take more. Lane 0 claims the
// next unit while the warp's loads of the current one are in flight, and the warp learns it by a shuffle:
// no block-wide sync. Why: with every block given the same units, at 16 MiB on 4x H100 each rank's blocks
// finished between 14-28 us and 77-83 us (round 52 call F). Claiming per block instead, with a __syncthreads a
// unit, made 8-32 MiB 2-3% slower (round 53 call A).
constexpr std::size_t kWarpUnitBatches = 4;  // of 32 * kUnroll packs: 4 KiB of each rank's input
constexpr std::size_t kWarpUnitPacks = kWarpUnitBatches * 32 * kUnroll;

template <int Type, int Op>
__device__ __forceinline__ unsigned int reduceClaimingWarps(const CollReduceArgs& args, const KernelNumbers& numbers,
                                                            const uint4* const* src, std::size_t packs) {
  const unsigned int lane = threadIdx.x % 32;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * (blockDim.x / 32);
  const std::size_t units = (packs + kWarpUnitPacks - 1) / kWarpUnitPacks;
  unsigned long long* counter = flagSlot(args.sync.flags[args.sync.rank], kPhaseRingClaim, kCollReduceClaimSlot, 0);
  unsigned long long tagged = 0;  // lane 0, after the warp's first claim: the counter holds this kernel's tag
  unsigned int ran = 0;
  for (std::size_t unit = static_cast<std::size_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; unit < units;) {
    if (lane == 0) ran += static_cast<unsigned int>(min(kWarpUnitPacks, packs - unit * kWarpUnitPacks));
    unsigned long long claimed = 0;
    const auto claim = [&] {
      if (lane != 0) return;
      claimed =
          tagged ? atomicAdd(counter, 1ull) & ((1ull << kCollClaimIndexBits) - 1) : claimNext(counter, numbers.seq);
      tagged = 1;
    };
    for (std::size_t b = 0; b < kWarpUnitBatches; ++b) {
      const std::size_t p = unit * kWarpUnitPacks + b * 32 * kUnroll + lane;
      if (b == 0) {
        reduceUnit<Type, Op>(args, src, packs, p, 32, claim);
      } else {
        reduceUnit<Type, Op>(args, src, packs, p, 32, [] {});
      }
    }
    unit = warps + __shfl_sync(0xffffffffu, claimed, 0);
  }
  return ran;
}

// Returns the packs this thread's block (thread 0) or, claiming, its warp (lane 0) reduced, for the trace; 0
// from the other threads.
template <int Type, int Op>
__device__ __forceinline__ unsigned int reduceRange(const CollReduceArgs& args, const KernelNumbers& numbers) {
  using S = typename Elem<Type>::S;
  constexpr std::size_t kElems = 16 / sizeof(S);
  if (args.end <= args.begin) return 0;
  if (!packAligned<Type>(args)) {
    reduceElements<Type, Op>(args, args.begin, args.end);
    return 0;
  }
  const int nranks = args.sync.nranks;
  const std::size_t packs = (args.end - args.begin) / kElems;
  const uint4* src[kCollMaxRanks];
#pragma unroll
  for (int j = 0; j < kCollMaxRanks; ++j) {
    src[j] = j < nranks ? reinterpret_cast<const uint4*>(static_cast<const S*>(args.src[j]) + args.begin) : nullptr;
  }
  unsigned int ran = 0;
  if (args.claim) {
    ran = reduceClaimingWarps<Type, Op>(args, numbers, src, packs);
  } else {
    const std::size_t unitPacks = static_cast<std::size_t>(blockDim.x) * kUnroll;
    const std::size_t units = (packs + unitPacks - 1) / unitPacks;
    for (std::size_t unit = blockIdx.x; unit < units; unit += gridDim.x) {
      reduceUnit<Type, Op>(args, src, packs, unit * unitPacks + threadIdx.x, blockDim.x, [] {});
      if (threadIdx.x == 0) ran += static_cast<unsigned int>(min(unitPacks, packs - unit * unitPacks));
    }
  }
  reduceElements<Type, Op>(args, args.begin + packs * kElems, args.end);
  return ran;
}

// setCollTrace's records on this GPU (coll_ring_reduce.cu sets every traced kernel's), or null.
__device__ CollTraceRecord* gCollReduceTrace = nullptr;

template <int Type, int Op>
__global__ void __launch_bounds__(kReduceThreads, 1) collReduceKernel(const __grid_constant__ CollReduceArgs args) {
  __shared__ KernelNumbers numbers;
  CollTraceRecord* trace = startTrace(gCollReduceTrace);
  if (trace != nullptr && threadIdx.x == 0) trace->chain = 0;
  readNumbers(args.sync, &numbers);
  if (blockBarrier(args.sync, numbers, kPhaseStart, kStepStartBarrier, BarrierAt::Start)) {
    if (trace != nullptr && threadIdx.x == 0) trace->startedNs = globalTimerNs();
    const unsigned int packsRun = reduceRange<Type, Op>(args, numbers);
    if (trace != nullptr) {
      if (threadIdx.x == 0) trace->rounds = 0;
      __syncthreads();  // the block's last loads and stores issued: its work done
      if (threadIdx.x == 0) trace->finishedNs = globalTimerNs();
      if (packsRun != 0) atomicAdd(&trace->rounds, static_cast<unsigned long long>(packsRun));
    }
    blockBarrier(args.sync, numbers, kPhaseEnd, kStepEndBarrier, BarrierAt::End);
  }
  finishKernel(args.sync, numbers);
}

}  // namespace

int collReduceBlocks(std::size_t bytes, int maxBlocks) {
  const std::size_t cap = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  const std::size_t wanted = (bytes + kReduceBytesPerBlock - 1) / kReduceBytesPerBlock;
  return static_cast<int>(std::max<std::size_t>(1, std::min(wanted, cap)));
}

void launchCollReduce(const CollReduceArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream,
                      const KernelLaunch& launch) {
  detail::dispatchTypeOp(type, op, [&](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    detail::launchKernel(collReduceKernel<kType, kOp>, blocks, kReduceThreads, stream, args, launch);
  });
}

namespace detail {

void setCollReduceTrace(CollTraceRecord* records) {
  PEERLINK_CUDA_CHECK(cudaMemcpyToSymbol(gCollReduceTrace, &records, sizeof(records)));
}

void preloadCollReduceKernels() {
  forEachTypeOp([](auto typeConstant, auto opConstant) {
    loadKernel(collReduceKernel<decltype(typeConstant)::value, decltype(opConstant)::value>, "collReduceKernel");
  });
}

}  // namespace detail
}  // namespace peerlink::kernels
