// Push reduction (CollPushReduceArgs): large two-shot all-reduce and reduce-scatter with no load from a
// peer. On H200 NVLink both directions pushing carry ~365 GB/s each way, both pulling ~335 (the direct-read
// two-shot mixes the two: 340 on 2 GPUs at 512 MiB, round 16), so every byte crosses as a store: into the
// owner's stage, then (all-reduce) as the owner's result into every output.
//
// Block b works through rounds; round k handles chunk c = k * grid + b of every shard, through stage k % 3:
//   send:   for each peer p whose shard has chunk c, wait (k >= 3) until p has freed the stage of our slot,
//           copy our input's chunk c of p's shard there, then release ready = base + k + 1 to p;
//   reduce: if our own shard has chunk c, wait for every peer's ready >= base + k + 1, reduce our input's
//           chunk with the peers' stages in rank order into dst, then tell each peer free = base + k + 1.
// A block sends round k + 1 before it reduces round k. Waits only point at earlier steps of the peers (their
// sends of this round, their reduces of round k - 3), so the rounds cannot deadlock; every wait has the
// call's deadline.
#include <algorithm>

#include "core/cuda_check.hpp"
#include "kernels/coll_device.cuh"
#include "kernels/coll_kernels.cuh"
#include "kernels/coll_reduce_ops.cuh"
#include "kernels/copy_device.cuh"
#include "kernels/kernel_preload.cuh"
#include "kernels/launch_kernel.cuh"

namespace peerlink::kernels {
namespace {

using namespace colldev;

constexpr int kPushThreads = 512;
constexpr int kCopyUnroll = 4;
constexpr int kStages = 3;      // round k + 1 is sent while round k waits: two rounds of slack for the frees
constexpr int kRoundBits = 20;  // flag value = (call number << kRoundBits) + round + 1
// Below this a block's chunk would leave its threads idle (kPushThreads x 16 bytes is one pass).
constexpr std::size_t kMinChunkBytes = std::size_t{8} << 10;
constexpr std::size_t kMaxChunkBytes = std::size_t{64} << 10;

__device__ __forceinline__ unsigned char* stageOf(const CollPushReduceArgs& args, int receiver, int sender, int stage) {
  return static_cast<unsigned char*>(args.stage[receiver]) + static_cast<std::size_t>(sender) * kCollPushSlotBytes +
         (static_cast<std::size_t>(blockIdx.x) * kStages + static_cast<std::size_t>(stage)) * args.chunkBytes;
}

// Thread `peer` (< nranks, not this rank, `active`) waits until its flag of `phase` from peer reaches
// `value`; false for the whole block when any did not in time (failure recorded).
__device__ __forceinline__ bool waitPeers(const CollPushReduceArgs& args, const KernelNumbers& numbers, int phase,
                                          int step, unsigned long long value, bool active) {
  const CollSyncArgs& s = args.sync;
  const int peer = static_cast<int>(threadIdx.x);
  bool ok = true;
  if (active && peer < s.nranks && peer != s.rank) {
    unsigned long long observed = 0;
    ok = waitAtLeast(flagSlot(s.flags[s.rank], phase, static_cast<int>(blockIdx.x), peer), value, s.timeoutNs,
                     &observed);
    if (!ok) recordFailure(s, numbers, step, peer, observed, value);
  }
  return __syncthreads_or(!ok) == 0;
}

// Elements [0, count) of dst[k] = op over ranks j of src[j], by the threads of this block: 16-byte packs,
// then the elements past the last whole pack.
template <int Type, int Op>
__device__ __forceinline__ void reduceChunk(const void* const (&src)[kCollMaxRanks], void* const (&dst)[kCollMaxRanks],
                                            int ndst, int nranks, std::size_t count) {
  using E = Elem<Type>;
  using S = typename E::S;
  using A = typename E::A;
  constexpr std::size_t kElems = 16 / sizeof(S);
  const std::size_t packs = count / kElems;
  for (std::size_t p = threadIdx.x; p < packs; p += blockDim.x) {
    uint4 v[kCollMaxRanks];
#pragma unroll
    for (int j = 0; j < kCollMaxRanks; ++j) {
      if (j < nranks) v[j] = static_cast<const uint4*>(src[j])[p];
    }
    const uint4 out = reducePack<Type, Op>(v, nranks);
#pragma unroll
    for (int k = 0; k < kCollMaxRanks; ++k) {
      if (k < ndst) static_cast<uint4*>(dst[k])[p] = out;
    }
  }
  for (std::size_t i = packs * kElems + threadIdx.x; i < count; i += blockDim.x) {
    A acc = E::load(static_cast<const S*>(src[0])[i]);
    for (int j = 1; j < nranks; ++j) acc = applyOp<A, Op>(acc, E::load(static_cast<const S*>(src[j])[i]));
    const S out = E::store(finishOp<A, Op>(acc, nranks));
    for (int k = 0; k < ndst; ++k) static_cast<S*>(dst[k])[i] = out;
  }
}

// The rounds of this block: chunk (k * grid + block) * chunkElems of every shard, and flag values.
struct Rounds {
  std::size_t chunkElems;
  std::size_t longest;  // elements of the longest shard
  unsigned long long base;
  __device__ std::size_t first(std::size_t k) const { return (k * gridDim.x + blockIdx.x) * chunkElems; }
  __device__ bool exists(std::size_t k) const { return first(k) < longest; }
};

// Send step of round k: once each receiver has freed the stage (round k - kStages reduced), copy this
// rank's input of the receiver's chunk there and release the receiver's ready flag.
template <typename S>
__device__ bool sendRound(const CollPushReduceArgs& args, const KernelNumbers& numbers, const Rounds& rounds,
                          std::size_t k) {
  const CollSyncArgs& s = args.sync;
  const int peer = static_cast<int>(threadIdx.x);  // thread p waits for and signals peer p
  const std::size_t first = rounds.first(k);
  const bool sendsToPeer = peer < s.nranks && peer != s.rank && first < args.shardCount[peer];
  if (k >= kStages &&
      !waitPeers(args, numbers, kPhasePushFree, kStepPushFree, rounds.base + k - kStages + 1, sendsToPeer)) {
    return false;
  }
  const int stage = static_cast<int>(k % kStages);
  for (int p = 0; p < s.nranks; ++p) {
    if (p == s.rank || first >= args.shardCount[p]) continue;
    const std::size_t bytes = min(rounds.chunkElems, args.shardCount[p] - first) * sizeof(S);
    detail::copyRange<CopyHint::Plain, uint4, kCopyUnroll>(stageOf(args, p, s.rank, stage),
                                                           static_cast<const S*>(args.shardInput[p]) + first, bytes,
                                                           threadIdx.x, blockDim.x);
  }
  __syncthreads();  // the block's stores precede thread p's release (fences are cumulative)
  if (sendsToPeer) {
    storeReleaseSys(
        reinterpret_cast<uint64_t*>(flagSlot(s.flags[peer], kPhasePushReady, static_cast<int>(blockIdx.x), s.rank)),
        rounds.base + k + 1);
  }
  return true;
}

// Reduce step of round k (when this rank's shard has the chunk): wait for every peer's data, reduce in rank
// order into dst, then free the stage for each peer.
template <int Type, int Op>
__device__ bool reduceRound(const CollPushReduceArgs& args, const KernelNumbers& numbers, const Rounds& rounds,
                            std::size_t k) {
  using S = typename Elem<Type>::S;
  const CollSyncArgs& s = args.sync;
  const int peer = static_cast<int>(threadIdx.x);
  const bool signals = peer < s.nranks && peer != s.rank;
  const std::size_t first = rounds.first(k);
  if (first >= args.shardCount[s.rank]) return true;
  if (!waitPeers(args, numbers, kPhasePushReady, kStepPushData, rounds.base + k + 1, signals)) return false;
  const int stage = static_cast<int>(k % kStages);
  const void* src[kCollMaxRanks] = {};
  void* dst[kCollMaxRanks] = {};
  for (int j = 0; j < s.nranks; ++j) {
    src[j] = j == s.rank ? static_cast<const void*>(static_cast<const S*>(args.shardInput[s.rank]) + first)
                         : static_cast<const void*>(stageOf(args, s.rank, j, stage));
  }
  for (int d = 0; d < args.ndst; ++d) dst[d] = static_cast<S*>(args.dst[d]) + first;
  reduceChunk<Type, Op>(src, dst, args.ndst, s.nranks, min(rounds.chunkElems, args.shardCount[s.rank] - first));
  __syncthreads();  // every load of the stages has returned (its value was stored)
  if (signals) {
    storeRelaxedSys(
        reinterpret_cast<uint64_t*>(flagSlot(s.flags[peer], kPhasePushFree, static_cast<int>(blockIdx.x), s.rank)),
        rounds.base + k + 1);
  }
  return true;
}

// Skewed by one round: round k + 1 is sent before round k is reduced, so the peers' data of round k has a
// whole copy's time to arrive, and the release fence of one round overlaps the next round's copy.
template <int Type, int Op>
__device__ bool pushRounds(const CollPushReduceArgs& args, const KernelNumbers& numbers) {
  using S = typename Elem<Type>::S;
  Rounds rounds{args.chunkBytes / sizeof(S), 0, numbers.seq << kRoundBits};
  for (int p = 0; p < args.sync.nranks; ++p) rounds.longest = max(rounds.longest, args.shardCount[p]);
  if (!rounds.exists(0)) return true;
  if (!sendRound<S>(args, numbers, rounds, 0)) return false;
  for (std::size_t k = 0; rounds.exists(k); ++k) {
    if (rounds.exists(k + 1) && !sendRound<S>(args, numbers, rounds, k + 1)) return false;
    if (!reduceRound<Type, Op>(args, numbers, rounds, k)) return false;
  }
  return true;
}

template <int Type, int Op>
__global__ void __launch_bounds__(kPushThreads, 1)
    collPushReduceKernel(const __grid_constant__ CollPushReduceArgs args) {
  __shared__ KernelNumbers numbers;
  readNumbers(args.sync, &numbers);
  if (blockBarrier(args.sync, numbers, kPhaseStart, kStepStartBarrier) && pushRounds<Type, Op>(args, numbers) &&
      args.endBarrier) {
    blockBarrier(args.sync, numbers, kPhaseEnd, kStepEndBarrier);
  }
  finishKernel(args.sync, numbers);
}

}  // namespace

int collPushBlocks(std::size_t maxShardBytes, int maxBlocks) {
  const std::size_t cap = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  const std::size_t wanted = (maxShardBytes + kMinChunkBytes - 1) / kMinChunkBytes;
  return static_cast<int>(std::max<std::size_t>(1, std::min(wanted, cap)));
}

std::size_t collPushChunkBytes(int blocks) {
  const std::size_t perBlock = kCollPushSlotBytes / (kStages * static_cast<std::size_t>(std::max(1, blocks)));
  return std::min(kMaxChunkBytes, perBlock / 16 * 16);
}

void launchCollPushReduce(const CollPushReduceArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream,
                          KernelGraph* graph) {
  detail::dispatchTypeOp(type, op, [&](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    detail::launchKernel(collPushReduceKernel<kType, kOp>, blocks, kPushThreads, stream, args, graph);
  });
}

namespace detail {

void preloadCollPushKernels() {
  forEachTypeOp([](auto typeConstant, auto opConstant) {
    loadKernel(collPushReduceKernel<decltype(typeConstant)::value, decltype(opConstant)::value>,
               "collPushReduceKernel");
  });
}

}  // namespace detail
}  // namespace peerlink::kernels
