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

// Each kernel is built for at most `Ranks` ranks (2, 4 or kCollMaxRanks; launchCollReduce picks the least that
// holds the call): its per-thread arrays of every rank's packs size its registers -- 44-48 a thread for 2 ranks,
// 64-80 for 4, 106-111 for 8 (sm_90) -- and at 512 threads a block of the 8-rank kernel takes 83-87% of an SM's
// register file, so nothing else runs on that SM beside it, while it works or waits for its peers.

// Elements [from, to) one by one, spread over every thread of the grid.
template <int Type, int Op, int Ranks>
__device__ __forceinline__ void reduceElements(const CollReduceArgs& args, std::size_t from, std::size_t to) {
  using E = Elem<Type>;
  using S = typename E::S;
  using A = typename E::A;
  const int nranks = args.sync.nranks;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = from + static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < to; i += stride) {
    S v[Ranks];
#pragma unroll
    for (int j = 0; j < Ranks; ++j) {
      if (j < nranks) v[j] = static_cast<const S*>(args.src[j])[i];
    }
    A acc = E::load(v[0]);
#pragma unroll
    for (int j = 1; j < Ranks; ++j) {
      if (j < nranks) acc = applyOp<A, Op>(acc, E::load(v[j]));
    }
    const S out = E::store(finishOp<A, Op>(acc, nranks));
#pragma unroll
    for (int k = 0; k < Ranks; ++k) {
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

template <int Type, int Op, int Ranks>
__device__ __forceinline__ void reduceRange(const CollReduceArgs& args) {
  using S = typename Elem<Type>::S;
  constexpr std::size_t kElems = 16 / sizeof(S);
  if (args.end <= args.begin) return;
  if (!packAligned<Type>(args)) {
    reduceElements<Type, Op, Ranks>(args, args.begin, args.end);
    return;
  }
  const int nranks = args.sync.nranks;
  const std::size_t packs = (args.end - args.begin) / kElems;
  const uint4* src[Ranks];
#pragma unroll
  for (int j = 0; j < Ranks; ++j) {
    src[j] = j < nranks ? reinterpret_cast<const uint4*>(static_cast<const S*>(args.src[j]) + args.begin) : nullptr;
  }
  const std::size_t threads = blockDim.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * threads * kUnroll;
  for (std::size_t p = static_cast<std::size_t>(blockIdx.x) * threads * kUnroll + threadIdx.x; p < packs; p += stride) {
    uint4 v[kUnroll][Ranks];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t at = p + u * threads;
#pragma unroll
      for (int j = 0; j < Ranks; ++j) {
        if (j < nranks && at < packs) v[u][j] = src[j][at];
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t at = p + u * threads;
      if (at >= packs) continue;
      const uint4 out = reducePack<Type, Op>(v[u], nranks);
#pragma unroll
      for (int k = 0; k < Ranks; ++k) {
        if (k < args.ndst) reinterpret_cast<uint4*>(static_cast<S*>(args.dst[k]) + args.begin)[at] = out;
      }
    }
  }
  reduceElements<Type, Op, Ranks>(args, args.begin + packs * kElems, args.end);
}

// setCollTrace's records on this GPU (coll_ring_reduce.cu sets every traced kernel's), or null.
__device__ CollTraceRecord* gCollReduceTrace = nullptr;

template <int Type, int Op, int Ranks>
__global__ void __launch_bounds__(kReduceThreads, 1) collReduceKernel(const __grid_constant__ CollReduceArgs args) {
  __shared__ KernelNumbers numbers;
  CollTraceRecord* trace = startTrace(gCollReduceTrace);
  if (trace != nullptr && threadIdx.x == 0) trace->chain = 0;
  readNumbers(args.sync, &numbers);
  if (blockBarrier(args.sync, numbers, kPhaseStart, kStepStartBarrier, BarrierAt::Start)) {
    if (trace != nullptr && threadIdx.x == 0) trace->startedNs = globalTimerNs();
    reduceRange<Type, Op, Ranks>(args);
    if (trace != nullptr) {
      __syncthreads();  // the block's last loads and stores issued: its work done
      if (threadIdx.x == 0) trace->finishedNs = globalTimerNs();
    }
    blockBarrier(args.sync, numbers, kPhaseEnd, kStepEndBarrier, BarrierAt::End);
  }
  finishKernel(args.sync, numbers);
}

}  // namespace

void launchCollReduce(const CollReduceArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream,
                      const KernelLaunch& launch) {
  const int bound = collReduceRankBound(args.sync.nranks, args.ndst);
  detail::dispatchTypeOp(type, op, [&](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    const auto kernel = bound == 2   ? collReduceKernel<kType, kOp, 2>
                        : bound == 4 ? collReduceKernel<kType, kOp, 4>
                                     : collReduceKernel<kType, kOp, kCollMaxRanks>;
    detail::launchKernel(kernel, blocks, kReduceThreads, stream, args, launch);
  });
}

namespace detail {

void setCollReduceTrace(CollTraceRecord* records) {
  PEERLINK_CUDA_CHECK(cudaMemcpyToSymbol(gCollReduceTrace, &records, sizeof(records)));
}

void preloadCollReduceKernels() {
  forEachTypeOp([](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    loadKernel(collReduceKernel<kType, kOp, 2>, "collReduceKernel");
    loadKernel(collReduceKernel<kType, kOp, 4>, "collReduceKernel");
    loadKernel(collReduceKernel<kType, kOp, kCollMaxRanks>, "collReduceKernel");
  });
}

}  // namespace detail
}  // namespace peerlink::kernels
