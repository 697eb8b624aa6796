// Device code shared by the ring kernels (coll_ring_broadcast.cu, coll_ring_reduce.cu): a block's warp
// roles, its rounds, and the signal warp that releases each round's ready flag to the next rank.
//
// Block b works through rounds; in the ring broadcast round k moves bytes [(k * grid + b) * chunk, + chunk)
// of the buffer, in the ring reduce the chunk its chain's first rank claimed for that round. Two
// groups of warps run independently: the work warps wait for what round k needs, move its chunk and arrive
// at the round's stage barrier without waiting; the signal warp passes that barrier and releases ready =
// (call << 20) + k + 1 to the next rank (its fence waits for the stores to land while the work warps go on
// with round k + 1). The work warps may be kRingStages rounds ahead of the signal warp: a stage's barrier
// id is reused that many rounds later, once the signal warp has passed it. After a timeout both groups
// still pass every barrier they share; they only stop waiting and moving data. Included by coll_ring_*.cu.
#pragma once

#include <cstddef>

#include "kernels/coll_device.cuh"

namespace peerlink::kernels::colldev {

constexpr int kRingWorkThreads = 480;   // warps 0-14
constexpr int kRingSignalThreads = 32;  // warp 15
constexpr int kRingThreads = kRingWorkThreads + kRingSignalThreads;
constexpr int kRingStages = kCollRingSlots;  // rounds the work warps may be ahead of the signal warp (and stage slots)
constexpr int kRingRoundBits = kCollRoundBits;  // flag value = (call number << kRingRoundBits) + round + 1
// Named barriers (0 is __syncthreads): the work warps among themselves, and one per stage from the work
// warps to the signal warp.
constexpr int kBarRingWork = 1;
constexpr int kBarRingFirstStage = 2;
static_assert(kBarRingFirstStage + kRingStages <= 16, "16 named barriers per block");

/// What the two groups of a block share.
struct RingShared {
  KernelNumbers numbers;
  int failed;                   // a wait timed out (failure recorded): both groups stop waiting and moving data
  unsigned long long signaled;  // rounds whose ready flag the signal warp has released
  unsigned long long handed;    // rounds thread 0 of the work warps has handed to the signal warp
  // Rounds the work warps hand in all, once they know (a kernel whose blocks claim chunks as they go: set
  // before the last round is handed); ~0 until then.
  unsigned long long endRound;
  // The chunk of round k in chunk[k % 2], from thread 0 to the work warps: thread 0 writes round k + 2's only
  // after every work thread has passed round k + 1's barrier, so after it read round k's.
  unsigned long long chunk[2];
  unsigned long long lastStage;   // the reduce's single chain: CollRankSync::ringStage as this kernel found it
  unsigned long long slotCredit;  // the reduce's single chain: stageCredit, or 0 (the whole stage is awaited)
};

/// The rounds of this block: bytes [first(k), first(k) + chunkBytes) of its chain's range (offsets from the
/// chain's start), and the flag base. `blocks` blocks share the chain; this one is number `index` of them.
struct RingRounds {
  std::size_t chunkBytes;
  std::size_t bytes;
  unsigned long long base;
  std::size_t blocks;
  std::size_t index;
  __device__ std::size_t first(std::size_t k) const { return (k * blocks + index) * chunkBytes; }
  __device__ bool exists(std::size_t k) const { return first(k) < bytes; }
  __device__ std::size_t size(std::size_t k) const { return min(chunkBytes, bytes - first(k)); }
  __device__ std::size_t chunks() const { return (bytes + chunkBytes - 1) / chunkBytes; }
  /// Rounds of this block when chunk k * blocks + index is its round k (the static assignment).
  __device__ std::size_t count() const { return chunks() > index ? (chunks() - index + blocks - 1) / blocks : 0; }
};

__device__ __forceinline__ void initRingShared(RingShared& shared) {
  if (threadIdx.x == 0) {
    shared.failed = 0;
    shared.signaled = 0;
    shared.handed = 0;
    shared.endRound = ~0ull;
    shared.chunk[0] = 0;
    shared.chunk[1] = 0;
    shared.lastStage = 0;
    shared.slotCredit = 0;
  }
}

// The hand-over words (signaled, handed, endRound) are each written by one thread while one thread of the other
// group reads them: shared-memory atomics, so every access is indivisible and ordered as the protocol needs, and
// compute-sanitizer's racecheck sees the synchronization they are (it reported plain volatile accesses to them as
// hazards). Each is one access a round by one thread, so their cost is nothing beside a round's chunk.
__device__ __forceinline__ unsigned long long loadHandOver(unsigned long long* word) {
  return atomicAdd(word, 0ull);
}

__device__ __forceinline__ void storeHandOver(unsigned long long* word, unsigned long long value) {
  atomicExch(word, value);
}

__device__ __forceinline__ bool ringFailed(const RingShared& shared) {
  return *static_cast<const volatile int*>(&shared.failed) != 0;
}

/// One work thread: waits until the signal warp has passed round k - kRingStages (so round k's stage
/// barrier is free again).
__device__ __forceinline__ void waitForStageBarrier(RingShared& shared, std::size_t k) {
  while (loadHandOver(&shared.signaled) + kRingStages <= k) {
  }
}

/// One work thread: waits until rank `from`'s flag of `phase` for this block reaches `value`; on a timeout
/// records the failure and sets shared.failed. Returns whether it came.
__device__ __forceinline__ bool ringWait(const CollSyncArgs& s, RingShared& shared, int phase, int step, int from,
                                         unsigned long long value) {
  if (ringFailed(shared)) return false;
  if (awaitPeer(s, shared.numbers, phase, static_cast<int>(blockIdx.x), from, value, step, true)) return true;
  *static_cast<volatile int*>(&shared.failed) = 1;
  return false;
}

/// Every work thread, after moving round k's chunk to the next rank: hands the round to the signal warp.
__device__ __forceinline__ void arriveAtStage(RingShared& shared, std::size_t k) {
  // The stores are ordered before the arrival at block scope; the signal warp's release at system scope is
  // cumulative over what the barrier made visible to it.
  __threadfence_block();
  barArrive(kBarRingFirstStage + static_cast<int>(k % kRingStages), kRingThreads);
  if (threadIdx.x == 0) storeHandOver(&shared.handed, k + 1);
}

/// The signal warp (only where there is a next rank): after round k's stage barrier, lane 0 releases
/// ready = base + k + 1 into `next`'s flags. A release waits for the block's stores to land (a microsecond or
/// two over NVLink), while the work warps may hand over a round in less: the rounds handed over meanwhile
/// share one release. Their barriers are passed first (each work thread arrives right after issuing its
/// stores, waiting on nothing of this warp, so these syncs end at once or soon), and the release of the last
/// covers every store those barriers made visible; the next rank waits for "at least round k", so a larger
/// value answers every earlier round too.
///
/// `staticRounds`: the block's rounds where they are known up front (RingRounds::count), else ~0: then the
/// work warps set shared.endRound before handing over their last round, and the warp stops after it.
__device__ __forceinline__ void signalRingRounds(const CollSyncArgs& s, RingShared& shared, std::size_t staticRounds,
                                                 unsigned long long base, int next) {
  const int lane = static_cast<int>(threadIdx.x) - kRingWorkThreads;
  std::size_t k = 0;
  while (k < staticRounds) {
    barSync(kBarRingFirstStage + static_cast<int>(k % kRingStages), kRingThreads);
    // Every lane must pass the same barriers: lane 0's view of the hand-overs decides for the warp. The
    // work warps are at most kRingStages rounds ahead of `signaled` (still k here), so `last` stays below
    // k + kRingStages and no barrier id is passed twice.
    unsigned long long handed = 0;
    if (lane == 0) handed = loadHandOver(&shared.handed);
    handed = __shfl_sync(0xffffffffu, handed, 0);
    std::size_t last = k;
    while (last + 1 < handed && last + 1 < k + kRingStages && last + 1 < staticRounds) {
      ++last;
      barSync(kBarRingFirstStage + static_cast<int>(last % kRingStages), kRingThreads);
    }
    if (lane == 0) {
      if (!ringFailed(shared)) {
        storeReleaseSys(
            reinterpret_cast<uint64_t*>(flagSlot(s.flags[next], kPhaseRingReady, static_cast<int>(blockIdx.x), s.rank)),
            base + last + 1);
      }
      storeHandOver(&shared.signaled, last + 1);
    }
    k = last + 1;
    // The work warps wrote endRound before arriving at its last round's barrier, which this warp has passed
    // if that round is in the batch just released. Lane 0 reads it for the warp.
    unsigned long long end = 0;
    if (lane == 0) end = loadHandOver(&shared.endRound);
    if (k >= __shfl_sync(0xffffffffu, end, 0)) break;
  }
}

/// The reduce collective's ring start on a block that stores into the next rank's stage, in place of waiting
/// for that rank to start (neighborStart), where the stage's slots moved since this rank's last ring reduce
/// that stored there (`lastStage`, call << kCollRingStageGridBits | grid; stageCredit says when they did not):
/// waits until every block of the next rank's kernel of that call has released the stage (releaseStage). The
/// stage is peerlink's own memory, read only by ring reduce kernels and written only by the previous rank
/// (the rings always run rank r -> r + 1), and the next rank's input and output are not touched, so this is
/// all the chain's stores need: a sender starts a call once the next rank has read its last chunk of the
/// previous one, without waiting for that rank's kernel to end and the next to launch. The ready and free
/// flags carry the call's number and only grow; a next rank still in an earlier ring call of ours (a
/// broadcast) may see this call's value answer a wait, but this rank sent every round of that call,
/// released, before this kernel began, so the data waited for is in place. Thread t < grid waits for block t.
__device__ __forceinline__ bool awaitStageReleased(const CollSyncArgs& s, const KernelNumbers& numbers,
                                                   unsigned long long lastStage, int next) {
  const unsigned long long call = lastStage >> kCollRingStageGridBits;
  const unsigned int grid = static_cast<unsigned int>(lastStage & ((1u << kCollRingStageGridBits) - 1));
  bool ok = true;
  if (next >= 0 && call != 0) {
    for (unsigned int block = threadIdx.x; block < grid; block += blockDim.x) {
      ok = awaitPeer(s, numbers, kPhaseRingFree, static_cast<int>(block), next, collRingStageReleased(call),
                     kStepRingStage, true) &&
           ok;
    }
  }
  return __syncthreads_or(!ok) == 0;
}

/// Thread 0 of a reduce collective's ring block at its start: this block's credit from this rank's last ring
/// reduce that stored into the next rank's stage (CollRankSync::ringCredit; `lastStage`, its ringStage) where that
/// kernel's slots are this one's -- the same grid and chunk, so block b owns the same slots and chunk words -- and this
/// block finished every round there; else 0, and the block waits for the whole stage instead (awaitStageReleased). With
/// a credit each of the block's first kRingStages rounds waits only until the next rank's block has read the last round
/// of the previous call that used its slot (collRingSlotReleased): the chain's senders refill slots while the next rank
/// still drains the previous call, as the credits of NCCL's connections outlive its kernels.
__device__ __forceinline__ unsigned long long stageCredit(const CollSyncArgs& s, unsigned long long lastStage,
                                                          std::size_t chunkBytes) {
  const volatile CollRankSync* sync = s.sync;
  const unsigned long long credit = sync->ringCredit[blockIdx.x];
  const bool sameSlots =
      (lastStage & ((1u << kCollRingStageGridBits) - 1)) == gridDim.x && sync->ringStageChunk[blockIdx.x] == chunkBytes;
  const bool sameCall = (credit >> kRingRoundBits) == (lastStage >> kCollRingStageGridBits);
  return credit != 0 && sameSlots && sameCall ? credit : 0;
}

/// The end of a ring reduce kernel, by thread 0 of every block once its work warps are done (their loads of
/// this rank's stage have returned: they passed a block barrier after each round's loads), or at once when
/// the block did not start: tells the previous rank that this block no longer reads the stage for this call
/// (its free flag at collRingStageReleased). Even after a timeout, so no later call waits for a release that
/// never comes; a previous rank still in this call then finds its free waits answered and stores rounds no
/// one reads, which a timed-out call may. Release: the loads precede the stores the previous rank makes once
/// it sees this.
__device__ __forceinline__ void releaseStage(const CollSyncArgs& s, const KernelNumbers& numbers) {
  const int previous = (s.rank + s.nranks - 1) % s.nranks;
  storeReleaseSys(
      reinterpret_cast<uint64_t*>(flagSlot(s.flags[previous], kPhaseRingFree, static_cast<int>(blockIdx.x), s.rank)),
      collRingStageReleased(numbers.seq));
}

/// The end of a ring reduce kernel, by every thread: where this rank stored into the next rank's stage (a
/// chain of the call has a next rank here), records the call, grid and chunk in CollRankSync::ringStage and
/// ringStageChunk for the next ring reduce, in every copy (writeEveryCopy), and thread 0 this block's `credit`
/// (stageCredit: 0 where the block stored nothing or did not finish).
__device__ __forceinline__ void recordStage(const CollSyncArgs& s, const KernelNumbers& numbers,
                                            const CollRingChain (&chains)[kCollMaxRanks], int chainCount,
                                            std::size_t chunkBytes, unsigned long long credit) {
  bool sends = false;
  for (int j = 0; j < chainCount; ++j) sends = sends || chains[j].next >= 0;
  if (!sends) return;
  const unsigned long long value = (numbers.seq << kCollRingStageGridBits) | gridDim.x;
  volatile CollRankSync* sync = s.sync;
  writeEveryCopy([&](unsigned int copy) {
    sync->ringStage[copy] = value;
    sync->ringStageChunk[copy] = chunkBytes;
  });
  if (threadIdx.x == 0) sync->ringCredit[blockIdx.x] = credit;
}

/// A ring kernel's body, by every thread: the start (neighborStart's -- for the reduce collective's single
/// chain its signal only, then, without a slot credit (stageCredit), awaitStageReleased); then, on this block's
/// chain (of `chains`, the grid cut evenly among them), the work warps run work(shared, rounds, chain) and the
/// signal warp, where the chain has a next rank, signals each round; block 0 then waits for every rank's start
/// (awaitEveryStart); the ring reduce's stage hand-over (releaseStage, recordStage); the counters at the end. `reduce`:
/// the ring reduce kernel, whose work warps claim chunks as they go and set shared.endRound and store into the next
/// rank's stage; otherwise (the broadcast, storing into the next rank's output) round k of a block is chunk k * blocks
/// + index (RingRounds).
template <typename Work>
__device__ __forceinline__ void runRing(const CollSyncArgs& s, const CollRingChain (&chains)[kCollMaxRanks],
                                        int chainCount, std::size_t chunkBytes, bool reduce, Work&& work) {
  __shared__ RingShared shared;
  initRingShared(shared);
  readNumbers(s, &shared.numbers);
  const std::size_t perChain = gridDim.x / static_cast<unsigned int>(chainCount);
  const CollRingChain& chain = chains[blockIdx.x / perChain];
  // The hand-over replaces the start wait of the reduce collective's single chain only: there the whole-stage
  // wait and the credits took ~11 us off each call on 4x H100 (28.7-30.0 -> 17.9-21.1 us per call, forced ring,
  // least squares over 128 MiB - 1 GiB); in the reduce-scatter's and all-reduce's n chains, where every rank
  // heads one, they moved nothing. Every ring reduce kernel still releases and records the stage, which the
  // hand-over relies on after them.
  const bool handover = reduce && chainCount == 1;
  if (handover && threadIdx.x == 0) {
    shared.lastStage = static_cast<const volatile CollRankSync*>(s.sync)->ringStage[blockIdx.x];
    shared.slotCredit = chain.next >= 0 ? stageCredit(s, shared.lastStage, chunkBytes) : 0;
  }
  bool started = false;
  if (handover) {
    started = neighborStart(s, shared.numbers, -1);  // its __syncthreads_or publishes lastStage and slotCredit
    if (shared.slotCredit == 0)
      started = started && awaitStageReleased(s, shared.numbers, shared.lastStage, chain.next);
  } else {
    started = neighborStart(s, shared.numbers, chain.next);
  }
  unsigned long long credit = 0;
  if (started) {
    const RingRounds rounds{chunkBytes, chain.bytes, shared.numbers.seq << kRingRoundBits, perChain,
                            blockIdx.x % perChain};
    if (threadIdx.x < kRingWorkThreads) {
      work(shared, rounds, chain);
    } else if (chain.next >= 0) {
      signalRingRounds(s, shared, reduce ? ~std::size_t{0} : rounds.count(), rounds.base, chain.next);
    }
    if (!ringFailed(shared)) awaitEveryStart(s, shared.numbers);
    // Thread 0 made every wait of the block's rounds (ringWait) and set endRound at the last.
    if (threadIdx.x == 0 && chain.next >= 0 && !ringFailed(shared)) {
      credit = rounds.base + loadHandOver(&shared.endRound);
    }
  }
  if (reduce) {
    if (threadIdx.x == 0) releaseStage(s, shared.numbers);
    recordStage(s, shared.numbers, chains, chainCount, chunkBytes, credit);
  }
  finishKernel(s, shared.numbers);
}

}  // namespace peerlink::kernels::colldev
