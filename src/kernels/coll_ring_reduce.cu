// Ring reduce (CollRingReduceArgs): a large reduce as a chain of stores towards the root, so every byte
// crosses NVLink once per link, as a store (the two-shot reduce loads every shard from n - 1 peers: on
// 4xH200 at 512 MiB 293 GB/s against NCCL's ring at 361). Position i = (rank - root - 1) mod n:
// position 0 stores its input, position i (0 < i < n - 1) the partial result of positions 0..i, into the
// stage of position i + 1; the root, last, combines the partial with its input into its output and
// finishes (avg divides by n). Floating results are rounded at every hop (the tolerance of host_reduce.hpp
// allows n - 1 roundings); f16 and bf16 combine in float.
//
// Rounds and warp roles as coll_ring_device.cuh describes; each block owns kRingStages slots of the stage
// at offset (block * kRingStages + slot) * chunk, round k using slot k mod kRingStages. Work warps, round k:
// (not the root) wait until the next rank has freed the slot (its free flag for round k - kRingStages),
// (not position 0) wait for the previous rank's ready flag, combine, then (not position 0) send the
// previous rank a free flag for round k once every load of the slot has returned, and (not the root) hand
// the round to the signal warp. Which chunk a round carries is not fixed: position 0's blocks claim the
// chain's chunks one by one as they go, and every position passes the chunk number on with the slot, so a
// block-chain that runs faster carries more; a block's last round carries kCollRingEnd, which ends the
// block at every position. With several chains side by side their first ranks keep pace with one another
// (keepPace). Waits only point at earlier steps of the chain or of the next rank's rounds, or at the least
// advanced chain, so nothing deadlocks. No end barrier: a rank's stage is written only for rounds it has not
// combined yet, its input is read only by itself, and the next call's start keeps the previous rank from
// refilling the first slots before this rank has read them. In the reduce collective, where the grid and
// chunk stay from call to call, each block of the previous rank waits, before each of its first kRingStages
// rounds, only until this rank's block has read the previous call's last round on that slot (its free flag;
// the end marker's slot too, freed once its chunk word is read: stageCredit in coll_ring_device.cuh,
// collRingSlotReleased in coll_kernels.cuh), so it refills slots while this rank still drains the previous call; where
// they changed, until every block of this kernel has released the stage (awaitStageReleased: the free flag at the
// call's largest value, at each block's end). In the reduce-scatter and all-reduce (n chains) it waits for
// this rank to start (neighborStart).
#include <algorithm>

#include "core/cuda_check.hpp"
#include "kernels/coll_device.cuh"
#include "kernels/coll_kernels.cuh"
#include "kernels/coll_reduce_ops.cuh"
#include "kernels/coll_ring_device.cuh"
#include "kernels/copy_device.cuh"
#include "kernels/kernel_preload.cuh"
#include "kernels/launch_kernel.cuh"

namespace peerlink::kernels {
namespace {

using namespace colldev;

constexpr int kUnroll = 4;  // 16-byte packs per thread in flight from each source
// setCollTrace's records on this GPU for the ring reduce kernels (gCollRingBroadcastTrace and gCollReduceTrace
// hold the others'), or null (the kernels' only cost then: one load and untaken branches).
__device__ CollTraceRecord* gCollRingReduceTrace = nullptr;

// Thread 0's cycles spent in `wait` are added to `*sink` when tracing (sink not null).
template <typename Wait>
__device__ __forceinline__ auto timedWait(unsigned long long* sink, Wait&& wait) {
  if (sink == nullptr) return wait();
  const long long from = clock64();
  auto result = wait();
  *sink += static_cast<unsigned long long>(clock64() - from);
  return result;
}

// One pack of partial op input, element-wise; `finish`: the root's last step (avg / nranks).
template <int Type, int Op>
__device__ __forceinline__ uint4 combinePack(uint4 partial, uint4 input, bool finish, int nranks) {
  using E = Elem<Type>;
  using S = typename E::S;
  using A = typename E::A;
  constexpr int kElems = static_cast<int>(sizeof(uint4) / sizeof(S));
  union Pack {
    uint4 raw;
    S e[kElems];
  };
  Pack a;
  Pack b;
  Pack out;
  a.raw = partial;
  b.raw = input;
#pragma unroll
  for (int e = 0; e < kElems; ++e) {
    const A acc = applyOp<A, Op>(E::load(a.e[e]), E::load(b.e[e]));
    out.e[e] = E::store(finish ? finishOp<A, Op>(acc, nranks) : acc);
  }
  return out.raw;
}

// dst = partial op input over `bytes` (a multiple of the element size) by the work warps; without a
// partial (position 0, or a one-rank root, whose avg divides by 1), a copy of input.
template <int Type, int Op>
__device__ void combineChunk(unsigned char* dst, const unsigned char* partial, const unsigned char* input,
                             std::size_t bytes, bool finish, int nranks, int tid) {
  using E = Elem<Type>;
  using S = typename E::S;
  using A = typename E::A;
  if (partial == nullptr) {
    detail::copyRange<CopyHint::Plain, uint4, kUnroll>(dst, input, bytes, static_cast<std::size_t>(tid),
                                                       kRingWorkThreads);
    return;
  }
  const std::size_t packs = bytes / sizeof(uint4);
  const auto* in4 = reinterpret_cast<const uint4*>(input);
  const auto* part4 = reinterpret_cast<const uint4*>(partial);
  auto* dst4 = reinterpret_cast<uint4*>(dst);
  constexpr std::size_t kStride = kRingWorkThreads;
  for (std::size_t base = static_cast<std::size_t>(tid); base < packs; base += kStride * kUnroll) {
    uint4 a[kUnroll];
    uint4 b[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t p = base + static_cast<std::size_t>(u) * kStride;
      if (p < packs) {
        a[u] = part4[p];
        b[u] = in4[p];
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t p = base + static_cast<std::size_t>(u) * kStride;
      if (p < packs) dst4[p] = combinePack<Type, Op>(a[u], b[u], finish, nranks);
    }
  }
  const auto* inS = reinterpret_cast<const S*>(input);
  const auto* partS = reinterpret_cast<const S*>(partial);
  auto* dstS = reinterpret_cast<S*>(dst);
  for (std::size_t i = packs * (sizeof(uint4) / sizeof(S)) + static_cast<std::size_t>(tid); i < bytes / sizeof(S);
       i += kStride) {
    const A acc = applyOp<A, Op>(E::load(partS[i]), E::load(inS[i]));
    dstS[i] = E::store(finish ? finishOp<A, Op>(acc, nranks) : acc);
  }
}

// Thread 0 of a chain's first position: the next chunk of the chain for this block, or kCollRingEnd; blocks
// that go faster take more chunks (on 4xH200 a ring's blocks ran up to 1.4x apart over a whole call, the same
// blocks slow at every position of the chain). The counter, in this rank's flag area at
// [kPhaseRingClaim][chain][0], holds the call it counts for in its high bits (the call's sequence number, 40
// bits) and the next chunk in its low 24 (chunks < 2^20 and 256 blocks claim at most 2^20 + 256 times): the
// first claim of a call finds an earlier call's tag and replaces it, so nothing has to reset the counter,
// not even after a call that timed out.
__device__ __forceinline__ unsigned long long claimChunk(const CollSyncArgs& s, const KernelNumbers& numbers, int chain,
                                                         std::size_t chunks) {
  constexpr int kIndexBits = kCollRingClaimIndexBits;
  constexpr unsigned long long kIndexMask = (1ull << kIndexBits) - 1;
  const unsigned long long tag = collRingClaimTag(numbers.seq);
  unsigned long long* word = flagSlot(s.flags[s.rank], kPhaseRingClaim, chain, 0);
  unsigned long long index = 0;
  for (;;) {
    const unsigned long long seen = *static_cast<volatile unsigned long long*>(word);
    if ((seen >> kIndexBits) == tag) {
      index = atomicAdd(word, 1ull) & kIndexMask;  // the tag cannot change back within this call
      break;
    }
    if (atomicCAS(word, seen, (tag << kIndexBits) | 1ull) == seen) break;  // first of the call: chunk 0
  }
  return index < chunks ? index : kCollRingEnd;
}

// Chains side by side (the reduce-scatter's and the all-reduce's n) share every link but one each, and a chain
// that gets ahead leaves the others the call's end on links it no longer uses. Which chain gets ahead is set by
// where the buffers lie: on 4x H100 at 512 MiB a process's calls all took 1121-1124 us with the four chains
// ending within 11-18 us of one another, or all 1213 with one chain ending ~255 us before the rest; fresh
// buffers gave every cell from the one to the other (peerlink_ring_trace showed it). So a chain's first
// rank claims chunk `index` only while it is less than `slack` beyond what the least advanced other chain has
// claimed (their counters, claimChunk's, at their first ranks: loads over NVLink, made only once `index`
// passes `limit`, the bound last seen; relaxed, as the bound is only a pace: no data depends on it). The least
// advanced chain never waits, so this cannot deadlock; a chain that has claimed all its chunks sets no bound. Thread 0
// of a head block; false on a timeout (recorded as kStepRingPace, naming the lagging chain's first rank).
__device__ bool keepPace(const CollRingReduceArgs& args, RingShared& shared, int chainIndex, unsigned long long index,
                         unsigned long long slack, unsigned long long& limit) {
  if (index < limit) return true;
  const CollSyncArgs& s = args.sync;
  const unsigned long long tag = collRingClaimTag(shared.numbers.seq);
  unsigned long long claimed[kCollMaxRanks];
  unsigned long long chunks[kCollMaxRanks];
  int heads[kCollMaxRanks];
  int others = 0;
  for (int c = 0; c < args.chains; ++c) {
    if (c == chainIndex) continue;
    chunks[others] = (args.chain[c].bytes + args.chunkBytes - 1) / args.chunkBytes;
    heads[others++] = args.chain[c].head;
  }
  Deadline deadline{0};
  unsigned int polls = 0;
  for (bool first = true;; first = false, ++polls) {
    for (int o = 0, c = 0; c < args.chains; ++c) {  // every load issued before any is used
      if (c == chainIndex) continue;
      claimed[o] = loadRelaxedSys(
          reinterpret_cast<const volatile uint64_t*>(flagSlot(s.flags[heads[o]], kPhaseRingClaim, c, 0)));
      ++o;
    }
    for (int o = 0; o < others; ++o) claimed[o] = collRingClaimed(claimed[o], tag, chunks[o]);
    int laggard = -1;
    limit = collRingPaceLimit(claimed, chunks, others, slack, &laggard);
    if (index < limit) return true;
    if (first) {
      deadline = Deadline::after(s.timeoutNs);
    } else if (givingUp(s, deadline, polls)) {
      recordFailure(s, shared.numbers, kStepRingPace, heads[laggard], claimed[laggard], index + 1 - slack);
      *static_cast<volatile int*>(&shared.failed) = 1;
      return false;
    }
  }
}

// Round k of a block: thread 0 waits for the slot it stores into to be free (not the root) and, past the
// chain's first position, for the previous rank's ready flag; then it learns the round's chunk — claimed at
// the first position, read from the slot's chunk word elsewhere — and writes it into the next rank's chunk
// word for that slot (covered by the round's release). A block runs until its chunk is kCollRingEnd, which it
// passes on as its last round.
template <int Type, int Op>
__device__ void combineRounds(const CollRingReduceArgs& args, RingShared& shared, const RingRounds& rounds,
                              const CollRingChain& chain, CollTraceRecord* trace) {
  const CollSyncArgs& s = args.sync;
  const int tid = static_cast<int>(threadIdx.x);
  const bool root = chain.next < 0;
  const bool head = chain.prev < 0;
  unsigned long long waits[4] = {0, 0, 0, 0};  // stage, free, ready, pace (traced only)
  const bool tracing = trace != nullptr && threadIdx.x == 0;
  if (tracing) trace->startedNs = globalTimerNs();
  const bool pacing = head && args.chains > 1;
  const unsigned long long slack = static_cast<unsigned long long>(kCollRingPaceRounds) * rounds.blocks;
  unsigned long long paceLimit = slack;  // every chain has claimed at least 0
  const int chainIndex = static_cast<int>(blockIdx.x / rounds.blocks);
  const std::size_t chunks = rounds.chunks();
  for (std::size_t k = 0;; ++k) {
    const int slotIndex = static_cast<int>(k % kRingStages);
    const std::size_t slot = (static_cast<std::size_t>(blockIdx.x) * kRingStages + slotIndex) * rounds.chunkBytes;
    if (tid == 0) {
      if (!root) {
        timedWait(tracing ? &waits[0] : nullptr, [&] {
          waitForStageBarrier(shared, k);
          return 0;
        });
        timedWait(tracing ? &waits[1] : nullptr, [&] {
          if (k >= kRingStages) {
            return ringWait(s, shared, kPhaseRingFree, kStepRingFree, chain.next, rounds.base + k - kRingStages + 1);
          }
          if (shared.slotCredit != 0) {  // the previous call's last round on this slot (stageCredit)
            return ringWait(s, shared, kPhaseRingFree, kStepRingStage, chain.next,
                            collRingSlotReleased(shared.slotCredit, k));
          }
          return true;
        });
      }
      unsigned long long c = kCollRingEnd;
      if (head) {
        if (!ringFailed(shared)) c = claimChunk(s, shared.numbers, chainIndex, chunks);
        if (pacing && c != kCollRingEnd && !timedWait(tracing ? &waits[3] : nullptr, [&] {
              return keepPace(args, shared, chainIndex, c, slack, paceLimit);
            })) {
          c = kCollRingEnd;
        }
      } else if (timedWait(tracing ? &waits[2] : nullptr, [&] {
                   return ringWait(s, shared, kPhaseRingReady, kStepRingData, chain.prev, rounds.base + k + 1);
                 })) {
        c = *static_cast<const volatile unsigned long long*>(
            flagSlot(s.flags[s.rank], kPhaseRingChunk, static_cast<int>(blockIdx.x), slotIndex));
      }
      if (!root) {
        *static_cast<volatile unsigned long long*>(
            flagSlot(s.flags[chain.next], kPhaseRingChunk, static_cast<int>(blockIdx.x), slotIndex)) = c;
      }
      if (c == kCollRingEnd) {
        storeHandOver(&shared.endRound, k + 1);
        // The end marker's slot is free once its chunk word is read (the branch used it): tell the previous
        // rank, whose next call may refill the slot before this block ends (collRingSlotReleased).
        if (!head && !ringFailed(shared)) {
          storeRelaxedSys(reinterpret_cast<uint64_t*>(
                              flagSlot(s.flags[chain.prev], kPhaseRingFree, static_cast<int>(blockIdx.x), s.rank)),
                          rounds.base + k + 1);
        }
      }
      *static_cast<volatile unsigned long long*>(&shared.chunk[k % 2]) = c;
    }
    barSync(kBarRingWork, kRingWorkThreads);  // the slots are ready and the chunk known, or the call failed
    const unsigned long long c = *static_cast<const volatile unsigned long long*>(&shared.chunk[k % 2]);
    if (c != kCollRingEnd && !ringFailed(shared)) {
      const std::size_t offset = static_cast<std::size_t>(c) * rounds.chunkBytes;
      unsigned char* dst = root ? static_cast<unsigned char*>(args.out) + chain.outOffset + offset
                                : static_cast<unsigned char*>(args.nextStage) + slot;
      const unsigned char* partial = chain.prev >= 0 ? static_cast<const unsigned char*>(args.stage) + slot : nullptr;
      combineChunk<Type, Op>(dst, partial, static_cast<const unsigned char*>(args.input) + chain.offset + offset,
                             min(rounds.chunkBytes, chain.bytes - offset), root, s.nranks, tid);
    }
    if (chain.prev >= 0 && c != kCollRingEnd) {
      barSync(kBarRingWork, kRingWorkThreads);  // every load of this rank's slot has returned (its value was used)
      if (tid == 0 && !ringFailed(shared)) {
        storeRelaxedSys(reinterpret_cast<uint64_t*>(
                            flagSlot(s.flags[chain.prev], kPhaseRingFree, static_cast<int>(blockIdx.x), s.rank)),
                        rounds.base + k + 1);
      }
    }
    if (!root) arriveAtStage(shared, k);
    if (c == kCollRingEnd) {
      if (tracing) {
        trace->chain = chainIndex;
        trace->finishedNs = globalTimerNs();
        trace->rounds = k + 1;
        trace->stageWait = waits[0];
        trace->freeWait = waits[1];
        trace->readyWait = waits[2];
        trace->paceWait = waits[3];
      }
      break;
    }
  }
}

template <int Type, int Op>
__global__ void __launch_bounds__(kRingThreads, 1)
    collRingReduceKernel(const __grid_constant__ CollRingReduceArgs args) {
  CollTraceRecord* trace = startTrace(gCollRingReduceTrace);
  runRing(args.sync, args.chain, args.chains, args.chunkBytes, true,
          [&](RingShared& shared, const RingRounds& rounds, const CollRingChain& chain) {
            combineRounds<Type, Op>(args, shared, rounds, chain, trace);
          });
}

}  // namespace

void setCollTrace(CollTraceRecord* records) {
  PEERLINK_CUDA_CHECK(cudaMemcpyToSymbol(gCollRingReduceTrace, &records, sizeof(records)));
  detail::setCollRingBroadcastTrace(records);
  detail::setCollReduceTrace(records);
}

void launchCollRingReduce(const CollRingReduceArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream,
                          const KernelLaunch& launch) {
  detail::dispatchTypeOp(type, op, [&](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    detail::launchKernel(collRingReduceKernel<kType, kOp>, blocks, colldev::kRingThreads, stream, args, launch);
  });
}

namespace detail {

void preloadCollRingReduceKernels() {
  forEachTypeOp([](auto typeConstant, auto opConstant) {
    loadKernel(collRingReduceKernel<decltype(typeConstant)::value, decltype(opConstant)::value>,
               "collRingReduceKernel");
  });
}

}  // namespace detail
}  // namespace peerlink::kernels
