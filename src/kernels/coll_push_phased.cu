// Push reduction in two phases (CollPushReduceArgs, every shard within one kCollPushSlotBytes slot; larger
// shards are cut in parts of a slot, a launch each, by comm_launch.cc): the whole block stores this rank's
// pieces of the peers' shards into their stages, meets block b of every peer (each releases its stores, then
// acquires theirs), and reduces its own shard from its input and the stages into every destination. No rank
// loads from a peer, so every byte crosses NVLink as a store (on 4x H200 both directions pushing carry ~365
// GB/s each way, pulling ~335, the direct reads' mix of the two ~310). Every thread works in both phases, and a
// block meets its peers on two flags a call (a kernel pipelined per block through ready and free flags every
// round of ~31 KiB was slower: 109.6 us at 16 MiB against this kernel's 78).
//
// The two flags: each block's walk is cut in two halves, each pushed and then released on its own flag.
// While the signalling warp's release waits for the first half's stores to land, the other warps push the
// second, so the meeting costs the link only the second half's wait, which the first half's reduce then
// covers (16 MiB: 78.1-78.3 us against one meeting's 79.8-80.1 on 4x H100).
//
// Block b of every rank handles the same packs of every shard (the grid-stride walk of coll_reduce.cu, over
// shard-relative indices, with a grid derived from the longest shard, cut at the same step), so block b's
// meetings are all that order b's reads of a stage after the peers' stores into it.
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

constexpr int kPhasedThreads = 512;
constexpr int kPhasedUnroll = 2;

// Sender `sender`'s slot of rank `receiver`'s stage.
template <typename S>
__device__ __forceinline__ S* stageSlot(const CollPushReduceArgs& args, int receiver, int sender) {
  return reinterpret_cast<S*>(static_cast<unsigned char*>(args.stage[receiver]) +
                              static_cast<std::size_t>(sender) * kCollPushSlotBytes);
}

// The first pack index of this thread's walk, and the walk's stride (packs; elements for the tails).
__device__ __forceinline__ std::size_t firstPack() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x * kPhasedUnroll + threadIdx.x;
}
__device__ __forceinline__ std::size_t packStride() {
  return static_cast<std::size_t>(gridDim.x) * blockDim.x * kPhasedUnroll;
}
__device__ __forceinline__ std::size_t firstElement() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::size_t elementStride() {
  return static_cast<std::size_t>(gridDim.x) * blockDim.x;
}

// The walk's steps of every block's first half: half of this block's steps over the longest shard (of every
// rank, this one's included), so that block b of every rank cuts every shard at the same pack.
template <typename S>
__device__ __forceinline__ std::size_t firstHalfSteps(const CollPushReduceArgs& args) {
  constexpr std::size_t kElems = 16 / sizeof(S);
  std::size_t longestPacks = 0;
  for (int p = 0; p < args.sync.nranks; ++p) longestPacks = max(longestPacks, args.shardCount[p] / kElems);
  // The block's own longest walk: every thread of the block gets the same count (thread 0's).
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x * kPhasedUnroll;
  const std::size_t steps = first < longestPacks ? (longestPacks - first + packStride() - 1) / packStride() : 0;
  return (steps + 1) / 2;
}

// Phase 1, steps [fromStep, toStep) of the walk: this block's packs of every peer's shard, from this rank's
// input into its slot of the peer's stage; the peers in ring order after this rank (rankAfter), so no two
// ranks start on the same receiver. `tails`: also the elements past each shard's last whole pack.
template <typename S>
__device__ __forceinline__ void pushPieces(const CollPushReduceArgs& args, std::size_t fromStep, std::size_t toStep,
                                           bool tails) {
  constexpr std::size_t kElems = 16 / sizeof(S);
  const int n = args.sync.nranks;
  const int rank = args.sync.rank;
  std::size_t longestPacks = 0;
  for (int p = 0; p < n; ++p) {
    if (p != rank) longestPacks = max(longestPacks, args.shardCount[p] / kElems);
  }
  const std::size_t threads = blockDim.x;
  const std::size_t stride = packStride();
  for (std::size_t step = fromStep, first = firstPack() + fromStep * stride; step < toStep && first < longestPacks;
       ++step, first += stride) {
    uint4 v[kCollMaxRanks - 1][kPhasedUnroll];
#pragma unroll
    for (int k = 1; k < kCollMaxRanks; ++k) {
      if (k >= n) break;
      const int p = rankAfter(rank, k, n);
      const std::size_t packs = args.shardCount[p] / kElems;
      const uint4* in = static_cast<const uint4*>(args.shardInput[p]);
#pragma unroll
      for (int u = 0; u < kPhasedUnroll; ++u) {
        const std::size_t at = first + u * threads;
        if (at < packs) v[k - 1][u] = in[at];
      }
    }
#pragma unroll
    for (int k = 1; k < kCollMaxRanks; ++k) {
      if (k >= n) break;
      const int p = rankAfter(rank, k, n);
      const std::size_t packs = args.shardCount[p] / kElems;
      uint4* out = reinterpret_cast<uint4*>(stageSlot<S>(args, p, rank));
#pragma unroll
      for (int u = 0; u < kPhasedUnroll; ++u) {
        const std::size_t at = first + u * threads;
        if (at < packs) out[at] = v[k - 1][u];
      }
    }
  }
  if (!tails) return;
  for (int k = 1; k < n; ++k) {
    const int p = rankAfter(rank, k, n);
    const S* in = static_cast<const S*>(args.shardInput[p]);
    S* out = stageSlot<S>(args, p, rank);
    for (std::size_t i = args.shardCount[p] / kElems * kElems + firstElement(); i < args.shardCount[p];
         i += elementStride())
      out[i] = in[i];
  }
}

// Phase 2, steps [fromStep, toStep) of the walk: this block's packs of this rank's shard, reduced in rank order
// from its input (its own rank) and the peers' slots of its stage, stored into every destination; `tails`:
// also the elements past the last whole pack.
template <int Type, int Op>
__device__ __forceinline__ void reduceOwnShard(const CollPushReduceArgs& args, std::size_t fromStep, std::size_t toStep,
                                               bool tails) {
  using E = Elem<Type>;
  using S = typename E::S;
  using A = typename E::A;
  constexpr std::size_t kElems = 16 / sizeof(S);
  const int n = args.sync.nranks;
  const int rank = args.sync.rank;
  const std::size_t count = args.shardCount[rank];
  const std::size_t packs = count / kElems;
  const S* src[kCollMaxRanks];
#pragma unroll
  for (int j = 0; j < kCollMaxRanks; ++j) {
    src[j] = j >= n ? nullptr : j == rank ? static_cast<const S*>(args.shardInput[rank]) : stageSlot<S>(args, rank, j);
  }
  const std::size_t threads = blockDim.x;
  const std::size_t stride = packStride();
  for (std::size_t step = fromStep, first = firstPack() + fromStep * stride; step < toStep && first < packs;
       ++step, first += stride) {
    uint4 v[kPhasedUnroll][kCollMaxRanks];
#pragma unroll
    for (int u = 0; u < kPhasedUnroll; ++u) {
      const std::size_t at = first + u * threads;
#pragma unroll
      for (int j = 0; j < kCollMaxRanks; ++j) {
        if (j < n && at < packs) v[u][j] = reinterpret_cast<const uint4*>(src[j])[at];
      }
    }
#pragma unroll
    for (int u = 0; u < kPhasedUnroll; ++u) {
      const std::size_t at = first + u * threads;
      if (at >= packs) continue;
      const uint4 out = reducePack<Type, Op>(v[u], n);
#pragma unroll
      for (int k = 0; k < kCollMaxRanks; ++k) {
        if (k < args.ndst) static_cast<uint4*>(args.dst[k])[at] = out;
      }
    }
  }
  if (!tails) return;
  for (std::size_t i = packs * kElems + firstElement(); i < count; i += elementStride()) {
    S v[kCollMaxRanks];
#pragma unroll
    for (int j = 0; j < kCollMaxRanks; ++j) {
      if (j < n) v[j] = src[j][i];
    }
    A acc = E::load(v[0]);
#pragma unroll
    for (int j = 1; j < kCollMaxRanks; ++j) {
      if (j < n) acc = applyOp<A, Op>(acc, E::load(v[j]));
    }
    const S out = E::store(finishOp<A, Op>(acc, n));
#pragma unroll
    for (int k = 0; k < kCollMaxRanks; ++k) {
      if (k < args.ndst) static_cast<S*>(args.dst[k])[i] = out;
    }
  }
}

// The halves' flags (kPhasePushReady), in the pipelined kernels' encoding ((call << kCollRoundBits) + round + 1,
// the halves as rounds 0 and 1), so that the flags on this phase only ever grow.
__device__ __forceinline__ unsigned long long halfValue(const KernelNumbers& numbers, int half) {
  return (numbers.seq << kCollRoundBits) + static_cast<unsigned long long>(half) + 1;
}

// Thread p releases this block's stores so far into peer p's stage (the __syncthreads orders the block's
// stores before it; a release is cumulative) as half `half` of the call; only that thread waits for them.
__device__ __forceinline__ void releaseHalf(const CollSyncArgs& s, const KernelNumbers& numbers, int half) {
  __syncthreads();
  const int peer = static_cast<int>(threadIdx.x);
  if (peer < s.nranks && peer != s.rank) signalPeer(s, kPhasePushReady, peer, halfValue(numbers, half), true);
}

// Thread p acquires block b of peer p's half `half` in this rank's stage; false (failure recorded) when a peer
// did not come in time.
__device__ __forceinline__ bool awaitHalf(const CollSyncArgs& s, const KernelNumbers& numbers, int half) {
  bool ok = true;
  const int peer = static_cast<int>(threadIdx.x);
  if (peer < s.nranks && peer != s.rank) {
    ok = awaitPeer(s, numbers, kPhasePushReady, static_cast<int>(blockIdx.x), peer, halfValue(numbers, half),
                   kStepPushData, true);
  }
  return __syncthreads_or(!ok) == 0;
}

template <int Type, int Op>
__global__ void __launch_bounds__(kPhasedThreads, 1)
    collPushPhasedKernel(const __grid_constant__ CollPushReduceArgs args) {
  using S = typename Elem<Type>::S;
  __shared__ KernelNumbers numbers;
  readNumbers(args.sync, &numbers);
  if (blockBarrier(args.sync, numbers, kPhaseStart, kStepStartBarrier, BarrierAt::Start)) {
    const std::size_t half = firstHalfSteps<S>(args);
    const std::size_t all = ~std::size_t{0};
    pushPieces<S>(args, 0, half, false);
    releaseHalf(args.sync, numbers, 0);
    pushPieces<S>(args, half, all, true);
    releaseHalf(args.sync, numbers, 1);
    if (awaitHalf(args.sync, numbers, 0)) {
      reduceOwnShard<Type, Op>(args, 0, half, false);
      if (awaitHalf(args.sync, numbers, 1)) {
        reduceOwnShard<Type, Op>(args, half, all, true);
        if (args.endBarrier) blockBarrier(args.sync, numbers, kPhaseEnd, kStepEndBarrier, BarrierAt::End);
      }
    }
  }
  finishKernel(args.sync, numbers);
}

}  // namespace

void launchCollPushPhased(const CollPushReduceArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream,
                          const KernelLaunch& launch) {
  detail::dispatchTypeOp(type, op, [&](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    detail::launchKernel(collPushPhasedKernel<kType, kOp>, blocks, kPhasedThreads, stream, args, launch);
  });
}

namespace detail {

void preloadCollPushPhasedKernels() {
  forEachTypeOp([](auto typeConstant, auto opConstant) {
    loadKernel(collPushPhasedKernel<decltype(typeConstant)::value, decltype(opConstant)::value>,
               "collPushPhasedKernel");
  });
}

}  // namespace detail
}  // namespace peerlink::kernels
