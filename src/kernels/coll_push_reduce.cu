// Push reduction (CollPushReduceArgs): large two-shot all-reduce and reduce-scatter with no load from a
// peer. On H200 NVLink both directions pushing carry ~365 GB/s each way, both pulling ~335 (the direct-read
// two-shot mixes the two: 340 on 2 GPUs at 512 MiB, round 16), so every byte crosses as a store: into the
// owner's stage, then (all-reduce) as the owner's result into every output.
//
// Block b works through rounds; round k handles chunk c = k * grid + b of every shard, through stage k % 4,
// in three groups of warps that run independently:
//   senders: for each peer p whose shard has chunk c, wait (k >= 4) until p has freed the stage of our
//            slot, copy our input's chunk c of p's shard there, arrive at the stage's named barrier;
//   signal:  after that barrier, release ready = base + k + 1 to each such p (the fence waits for the
//            stores to land; the senders are already on the next round);
//   reduce:  if our own shard has chunk c, wait for every peer's ready >= base + k + 1, reduce our input's
//            chunk with the peers' stages in rank order into dst, then tell each peer free = base + k + 1.
// Waits only point at earlier steps (the peers' sends of this round, their reduces of round k - 4, the
// signal warp's earlier rounds), so nothing deadlocks; every flag wait has the call's deadline, and after a
// timeout every group still passes every named barrier it shares (it only stops waiting and moving data).
// (An earlier version ran every step with the whole block in lock step: each round waited for its own
// release fence, 1.2-1.7x slower than the direct reads on 2xH200, rounds 20 and 21.)
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

// Warp roles of a block: the senders store this rank's pieces into the owners' stages, the signal warp
// releases each round's ready flags once the senders' stores are issued (its fence waits for them to land,
// while the senders go on with the next round), the reducers reduce this rank's shard from the stages.
constexpr int kSenderThreads = 256;   // warps 0-7
constexpr int kSignalThreads = 32;    // warp 8
constexpr int kReducerThreads = 224;  // warps 9-15
constexpr int kPushThreads = kSenderThreads + kSignalThreads + kReducerThreads;
constexpr int kCopyUnroll = 4;
constexpr int kStages = 4;                  // rounds a sender may be ahead of the receivers' frees
constexpr int kRoundBits = kCollRoundBits;  // flag value = (call number << kRoundBits) + round + 1
// Named barriers (0 is __syncthreads): the senders among themselves, the reducers among themselves, and
// one per stage from the senders to the signal warp (a stage's barrier is reused kStages rounds later,
// after the signal warp has passed it: the senders wait for that).
constexpr int kBarSenders = 1;
constexpr int kBarReducers = 2;
constexpr int kBarFirstStage = 3;
static_assert(kBarFirstStage + kStages <= 16, "16 named barriers per block");
// Below this a block's chunk would leave its threads idle (kSenderThreads x 16 bytes is one pass).
constexpr std::size_t kMinChunkBytes = std::size_t{8} << 10;
constexpr std::size_t kMaxChunkBytes = std::size_t{64} << 10;

// bar.sync that also returns whether `value` was true for any participant (the same answer for all).
__device__ __forceinline__ bool barSyncOr(int id, int threads, bool value) {
  int any = 0;
  asm volatile("{\n .reg .pred p, q;\n setp.ne.s32 p, %1, 0;\n bar.red.or.pred q, %2, %3, p;\n selp.s32 %0, 1, 0, q;\n}"
               : "=r"(any)
               : "r"(static_cast<int>(value)), "r"(id), "r"(threads)
               : "memory");
  return any != 0;
}

// What the roles of a block share.
struct PushShared {
  KernelNumbers numbers;
  int failed;                   // a wait timed out (failure recorded): every role stops waiting and moving data
  unsigned long long signaled;  // rounds whose ready flags the signal warp has released
};

__device__ __forceinline__ unsigned char* stageOf(const CollPushReduceArgs& args, int receiver, int sender, int stage) {
  return static_cast<unsigned char*>(args.stage[receiver]) + static_cast<std::size_t>(sender) * kCollPushSlotBytes +
         (static_cast<std::size_t>(blockIdx.x) * kStages + static_cast<std::size_t>(stage)) * args.chunkBytes;
}

// The rounds of this block: chunk (k * grid + block) * chunkElems of every shard, and flag values.
struct Rounds {
  std::size_t chunkElems;
  std::size_t longest;  // elements of the longest shard
  unsigned long long base;
  __device__ std::size_t first(std::size_t k) const { return (k * gridDim.x + blockIdx.x) * chunkElems; }
  __device__ bool exists(std::size_t k) const { return first(k) < longest; }
};

// One thread waits until this rank's flag of `phase` from every peer whose shard starting at `first`... is
// in `peers` reaches `value`; on a timeout it records the failure and sets shared.failed.
__device__ void waitAll(const CollPushReduceArgs& args, PushShared& shared, int phase, int step,
                        unsigned long long value, unsigned int peers) {
  const CollSyncArgs& s = args.sync;
  for (int p = 0; p < s.nranks; ++p) {
    if (((peers >> p) & 1u) == 0) continue;
    if (*static_cast<volatile int*>(&shared.failed) != 0) return;
    unsigned long long observed = 0;
    if (!waitAtLeast(flagSlot(s.flags[s.rank], phase, static_cast<int>(blockIdx.x), p), value, s.timeoutNs,
                     &observed)) {
      recordFailure(s, shared.numbers, step, p, observed, value);
      *static_cast<volatile int*>(&shared.failed) = 1;
      return;
    }
  }
}

// The peers whose shard has elements at `first` (they receive a piece this round).
__device__ __forceinline__ unsigned int receiversAt(const CollPushReduceArgs& args, std::size_t first) {
  unsigned int peers = 0;
  for (int p = 0; p < args.sync.nranks; ++p) {
    if (p != args.sync.rank && first < args.shardCount[p]) peers |= 1u << p;
  }
  return peers;
}

// Elements [0, count) of dst[k] = op over ranks j of src[j], by `threads` threads (tid: this one's index):
// 16-byte packs, then the elements past the last whole pack.
template <int Type, int Op>
__device__ __forceinline__ void reduceChunk(const void* const (&src)[kCollMaxRanks], void* const (&dst)[kCollMaxRanks],
                                            int ndst, int nranks, std::size_t count, int tid, int threads) {
  using E = Elem<Type>;
  using S = typename E::S;
  using A = typename E::A;
  constexpr std::size_t kElems = 16 / sizeof(S);
  const std::size_t packs = count / kElems;
  for (std::size_t p = static_cast<std::size_t>(tid); p < packs; p += static_cast<std::size_t>(threads)) {
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
  for (std::size_t i = packs * kElems + static_cast<std::size_t>(tid); i < count;
       i += static_cast<std::size_t>(threads)) {
    A acc = E::load(static_cast<const S*>(src[0])[i]);
    for (int j = 1; j < nranks; ++j) acc = applyOp<A, Op>(acc, E::load(static_cast<const S*>(src[j])[i]));
    const S out = E::store(finishOp<A, Op>(acc, nranks));
    for (int k = 0; k < ndst; ++k) static_cast<S*>(dst[k])[i] = out;
  }
}

// Senders: round k waits (thread 0) until the signal warp has passed round k - kStages and every receiver
// has reduced it, then copies this rank's piece of each receiver's chunk into its stage and arrives at the
// stage's barrier without waiting.
template <typename S>
__device__ void sendRounds(const CollPushReduceArgs& args, PushShared& shared, const Rounds& rounds) {
  const CollSyncArgs& s = args.sync;
  const int tid = static_cast<int>(threadIdx.x);
  const volatile int& failed = shared.failed;
  for (std::size_t k = 0; rounds.exists(k); ++k) {
    const std::size_t first = rounds.first(k);
    const int stage = static_cast<int>(k % kStages);
    if (tid == 0) {
      while (*static_cast<volatile unsigned long long*>(&shared.signaled) + kStages <= k) {
      }
      if (k >= kStages) {
        waitAll(args, shared, kPhasePushFree, kStepPushFree, rounds.base + k - kStages + 1, receiversAt(args, first));
      }
    }
    barSync(kBarSenders, kSenderThreads);
    if (failed == 0) {
      for (int p = 0; p < s.nranks; ++p) {
        if (p == s.rank || first >= args.shardCount[p]) continue;
        const std::size_t bytes = min(rounds.chunkElems, args.shardCount[p] - first) * sizeof(S);
        detail::copyRange<CopyHint::Plain, uint4, kCopyUnroll>(stageOf(args, p, s.rank, stage),
                                                               static_cast<const S*>(args.shardInput[p]) + first, bytes,
                                                               static_cast<std::size_t>(tid), kSenderThreads);
      }
    }
    // The copies are ordered before the arrival at block scope; the signal warp's release at system scope is
    // cumulative over what the barrier made visible to it.
    __threadfence_block();
    barArrive(kBarFirstStage + stage, kSenderThreads + kSignalThreads);
  }
}

// Signal warp: once the senders' stores of round k are issued, lane p releases round k's ready flag to
// peer p (a release is cumulative: it covers the stores the barrier made visible to the lane).
__device__ void signalRounds(const CollPushReduceArgs& args, PushShared& shared, const Rounds& rounds) {
  const CollSyncArgs& s = args.sync;
  const int lane = static_cast<int>(threadIdx.x) - kSenderThreads;
  for (std::size_t k = 0; rounds.exists(k); ++k) {
    barSync(kBarFirstStage + static_cast<int>(k % kStages), kSenderThreads + kSignalThreads);
    const std::size_t first = rounds.first(k);
    if (*static_cast<volatile int*>(&shared.failed) == 0 && lane < s.nranks && lane != s.rank &&
        first < args.shardCount[lane]) {
      storeReleaseSys(
          reinterpret_cast<uint64_t*>(flagSlot(s.flags[lane], kPhasePushReady, static_cast<int>(blockIdx.x), s.rank)),
          rounds.base + k + 1);
    }
    __syncwarp();
    if (lane == 0) *static_cast<volatile unsigned long long*>(&shared.signaled) = k + 1;
  }
}

// Reducers: round k (while this rank's shard has chunk k) waits (thread 0) for every peer's ready flag,
// reduces this rank's input with the stages in rank order into dst, then frees the stage for each peer.
template <int Type, int Op>
__device__ void reduceRounds(const CollPushReduceArgs& args, PushShared& shared, const Rounds& rounds) {
  using S = typename Elem<Type>::S;
  const CollSyncArgs& s = args.sync;
  const int tid = static_cast<int>(threadIdx.x) - kSenderThreads - kSignalThreads;
  const volatile int& failed = shared.failed;
  unsigned int peers = 0;
  for (int p = 0; p < s.nranks; ++p) peers |= p == s.rank ? 0u : 1u << p;
  for (std::size_t k = 0; rounds.first(k) < args.shardCount[s.rank]; ++k) {
    const std::size_t first = rounds.first(k);
    const int stage = static_cast<int>(k % kStages);
    if (tid == 0) waitAll(args, shared, kPhasePushReady, kStepPushData, rounds.base + k + 1, peers);
    // Another role may set `failed` at any time: the reducers agree on one answer, so all take the same
    // path to the next barrier.
    if (barSyncOr(kBarReducers, kReducerThreads, failed != 0)) continue;
    const void* src[kCollMaxRanks] = {};
    void* dst[kCollMaxRanks] = {};
    for (int j = 0; j < s.nranks; ++j) {
      src[j] = j == s.rank ? static_cast<const void*>(static_cast<const S*>(args.shardInput[s.rank]) + first)
                           : static_cast<const void*>(stageOf(args, s.rank, j, stage));
    }
    for (int d = 0; d < args.ndst; ++d) dst[d] = static_cast<S*>(args.dst[d]) + first;
    reduceChunk<Type, Op>(src, dst, args.ndst, s.nranks, min(rounds.chunkElems, args.shardCount[s.rank] - first), tid,
                          kReducerThreads);
    barSync(kBarReducers, kReducerThreads);  // every load of the stages has returned (its value was stored)
    if (tid < s.nranks && tid != s.rank) {
      storeRelaxedSys(
          reinterpret_cast<uint64_t*>(flagSlot(s.flags[tid], kPhasePushFree, static_cast<int>(blockIdx.x), s.rank)),
          rounds.base + k + 1);
    }
  }
}

template <int Type, int Op>
__global__ void __launch_bounds__(kPushThreads, 1)
    collPushReduceKernel(const __grid_constant__ CollPushReduceArgs args) {
  using S = typename Elem<Type>::S;
  __shared__ PushShared shared;
  if (threadIdx.x == 0) {
    shared.failed = 0;
    shared.signaled = 0;
  }
  readNumbers(args.sync, &shared.numbers);
  if (blockBarrier(args.sync, shared.numbers, kPhaseStart, kStepStartBarrier, BarrierAt::Start)) {
    Rounds rounds{args.chunkBytes / sizeof(S), 0, shared.numbers.seq << kRoundBits};
    for (int p = 0; p < args.sync.nranks; ++p) rounds.longest = max(rounds.longest, args.shardCount[p]);
    if (threadIdx.x < kSenderThreads) {
      sendRounds<S>(args, shared, rounds);
    } else if (threadIdx.x < kSenderThreads + kSignalThreads) {
      signalRounds(args, shared, rounds);
    } else {
      reduceRounds<Type, Op>(args, shared, rounds);
    }
    __syncthreads();
    if (args.endBarrier && shared.failed == 0)
      blockBarrier(args.sync, shared.numbers, kPhaseEnd, kStepEndBarrier, BarrierAt::End);
  }
  finishKernel(args.sync, shared.numbers);
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
                          const KernelLaunch& launch) {
  detail::dispatchTypeOp(type, op, [&](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    detail::launchKernel(collPushReduceKernel<kType, kOp>, blocks, kPushThreads, stream, args, launch);
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
