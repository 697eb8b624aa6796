// Device code shared by the collective kernels: counters, failure records, per-block barriers with
// deadlines, and the bookkeeping at a kernel's end. Included by coll_*.cu only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/coll_kernels.cuh"
#include "kernels/device_status.cuh"

namespace peerlink::kernels::colldev {

constexpr unsigned int kPollsPerTimerRead = 64;  // a power of two

/// A kernel's numbers, read by thread 0 at the start and shared through shared memory.
struct KernelNumbers {
  unsigned long long launch;                  // this kernel's launch id
  unsigned long long seq;                     // collective: the call's number
  unsigned long long peerSeq[kCollMaxRanks];  // send/recv: the set's number with each peer
};

/// Whether `rank`'s bit is set in a mask of ranks (tokens, peers, pending senders).
__device__ __forceinline__ bool inMask(unsigned int mask, int rank) {
  return ((mask >> rank) & 1u) != 0;
}

/// The rank `k` places after `rank` in a ring of `nranks` (0 <= k < nranks): the order in which a one-shot
/// kernel sends and awaits its peers, so that no two ranks send to the same peer first.
__device__ __forceinline__ int rankAfter(int rank, int k, int nranks) {
  return rank + k < nranks ? rank + k : rank + k - nranks;
}

/// Peers' lines a one-shot kernel polls together: each thread issues the loads of every line still
/// pending before it looks at any of them, so their round trips to memory overlap instead of following one
/// another (a poll is a load whose value is needed at once). Four keep the loads' registers small; eight
/// ranks poll in two batches.
constexpr int kPollBatch = 4;

/// Programmatic dependent launch (KernelLaunch::overlapPrevious): a kernel launched that way may start
/// while the previous kernel in its stream runs, and must not touch global memory -- its inputs, the
/// counters, its peers' flags and scratch -- until that kernel has finished and its stores are visible,
/// which griddepcontrol.wait awaits (at once when the kernel was launched normally). Every thread that
/// touches memory calls it; before it only shared memory.
__device__ __forceinline__ void awaitPreviousKernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Lets the next kernel in the stream, if launched overlapping, be scheduled once every block of this one
/// has called it: its blocks wait in awaitPreviousKernel, so this kernel keeps every SM it already holds
/// and every one of its blocks is resident before any of the next kernel's can be.
__device__ __forceinline__ void allowNextKernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// Waits for the previous kernel (awaitPreviousKernel), lets the next be scheduled (allowNextKernel), then
/// thread 0 reads this rank's counters (the previous kernel on the stream wrote them); every thread then
/// sees `numbers`. Call at the top of a kernel, by every thread.
__device__ __forceinline__ void readNumbers(const CollSyncArgs& s, KernelNumbers* numbers) {
  awaitPreviousKernel();
  allowNextKernel();
  if (threadIdx.x == 0) {
    const volatile CollRankSync* sync = s.sync;
    const unsigned int copy = blockIdx.x;
    numbers->launch = sync->launches[copy] + 1;
    if (s.p2p) {
      for (int p = 0; p < kCollMaxRanks; ++p) numbers->peerSeq[p] = sync->pairSeq[p][copy] + 1;
    } else {
      numbers->seq = sync->collSeq[copy] + 1;
    }
  }
  __syncthreads();
}

/// The value this rank and `peer` agree on for this kernel.
__device__ __forceinline__ unsigned long long valueFor(const CollSyncArgs& s, const KernelNumbers& numbers, int peer) {
  return s.p2p ? numbers.peerSeq[peer] : numbers.seq;
}

/// A waiting thread reads the abort word once per this many polls (every 64th timer read). The word is mapped
/// host memory: a read crosses PCIe and is not cached, and thousands of waiting warps reading it at the timer's
/// pace saturated the GPU's outstanding reads to the host -- every wait then crawled (an LL128 all-reduce of
/// 512 KiB across two processes took ~930 us instead of ~5). A wait of ~4096 polls (milliseconds) is what the
/// abort word is for.
constexpr unsigned int kPollsPerAbortRead = kPollsPerTimerRead * 64;

/// Whether the communicator was aborted (its abort word, in mapped host memory, is set).
__device__ __forceinline__ bool aborted(const unsigned int* abort) {
  return abort != nullptr && *static_cast<const volatile unsigned int*>(abort) != 0;
}

/// Whether a wait that armed `deadline` should give up after `polls` polls: the deadline passed, or, read only
/// every kPollsPerAbortRead polls, the communicator was aborted.
__device__ __forceinline__ bool givingUp(const CollSyncArgs& s, const Deadline& deadline, unsigned int polls) {
  return deadline.passed() || (polls % kPollsPerAbortRead == 0 && aborted(s.abort));
}

/// Records a stall; the first failing thread of a kernel run writes the host record (the launch id last).
__device__ __forceinline__ void recordFailure(const CollSyncArgs& s, const KernelNumbers& numbers, int step, int peer,
                                              unsigned long long observed, unsigned long long expected) {
  if (atomicMax(&s.sync->failedLaunch, numbers.launch) >= numbers.launch) return;
  volatile CollFailure* f = s.failure;
  f->seq = s.p2p ? numbers.peerSeq[peer] : numbers.seq;
  f->observed = observed;
  f->expected = expected;
  f->timeNs = globalTimerNs();
  f->status = aborted(s.abort) ? PEERLINK_STATUS_REMOTE_ERROR : PEERLINK_STATUS_TIMEOUT;
  f->step = step;
  f->peer = peer;
  f->block = static_cast<int>(blockIdx.x);
  f->collective = s.collective;
  __threadfence_system();
  f->launch = numbers.launch;
  __threadfence_system();
}

/// Spins until *flag >= value (then, with `acquire`, acquires at system scope) or timeoutNs pass or `abort` is
/// set; reads the timer only every kPollsPerTimerRead polls and the abort word every kPollsPerAbortRead, and
/// starts the deadline at the first timer read (a flag already set costs no read).
__device__ __forceinline__ bool waitAtLeast(const unsigned long long* flag, unsigned long long value,
                                            unsigned long long timeoutNs, const unsigned int* abort,
                                            unsigned long long* observed, bool acquire = true) {
  Deadline deadline{0};
  bool armed = false;
  const volatile uint64_t* word = reinterpret_cast<const volatile uint64_t*>(flag);
  for (unsigned int polls = 1;; ++polls) {
    const unsigned long long seen = loadRelaxedSys(word);
    if (seen >= value) {
      *observed = acquire ? loadAcquireSys(word) : seen;
      return true;
    }
    if (polls % kPollsPerTimerRead != 0) continue;
    if (!armed) {
      deadline = Deadline::after(timeoutNs);
      armed = true;
    } else if (deadline.passed() || (polls % kPollsPerAbortRead == 0 && aborted(abort))) {
      *observed = seen;
      return false;
    }
  }
}

__device__ __forceinline__ unsigned long long* flagSlot(unsigned long long* area, int phase, int block, int from) {
  return area + (static_cast<size_t>(phase) * kCollMaxBlocks + static_cast<size_t>(block)) * kCollMaxRanks + from;
}

/// Which of a kernel's two barriers blockBarrier is: what it must order differs.
enum class BarrierAt {
  // Before any data moves. It says only "this rank's kernel has started": the work before it on the
  // rank's stream has ended with its kernel, so a relaxed signal publishes nothing new, and no fence waits.
  // The wait acquires, so this block's accesses to peers' buffers follow the peers' arrival.
  Start,
  // After the data. With CollSyncArgs::peersStore it releases this block's stores to the peers and
  // acquires theirs; without (every access to a peer was a load, whose value is already in hand) it only
  // says "done reading", relaxed.
  End,
};

/// Block b of this rank tells block b of `peer` that it has got to `phase`, with `value` (thread p of a
/// block signals peer p). `release`: this block's stores before it (ordered by a __syncthreads) are visible
/// to the peer once the value is; else relaxed, which says only "got here".
__device__ __forceinline__ void signalPeer(const CollSyncArgs& s, int phase, int peer, unsigned long long value,
                                           bool release) {
  uint64_t* signal = reinterpret_cast<uint64_t*>(flagSlot(s.flags[peer], phase, static_cast<int>(blockIdx.x), s.rank));
  if (release) {
    storeReleaseSys(signal, value);
  } else {
    storeRelaxedSys(signal, value);
  }
}

/// Waits until block `block` of `peer` has signalled `phase` to this rank with at least `value` (acquiring
/// with `acquire`); on a timeout records the failure at `step` and returns false.
__device__ __forceinline__ bool awaitPeer(const CollSyncArgs& s, const KernelNumbers& numbers, int phase, int block,
                                          int peer, unsigned long long value, int step, bool acquire) {
  unsigned long long observed = 0;
  if (waitAtLeast(flagSlot(s.flags[s.rank], phase, block, peer), value, s.timeoutNs, s.abort, &observed, acquire)) {
    return true;
  }
  recordFailure(s, numbers, step, peer, observed, value);
  return false;
}

/// This block's record of a traced kernel (setCollTrace), `records` + its index, with its SM and start stamped
/// by thread 0; null while tracing is off.
__device__ __forceinline__ CollTraceRecord* startTrace(CollTraceRecord* records) {
  if (records == nullptr) return nullptr;
  CollTraceRecord* record = records + blockIdx.x;
  if (threadIdx.x == 0) {
    record->smid = smId();
    record->enteredNs = globalTimerNs();
  }
  return record;
}

/// Block b of this rank meets block b of every peer of the call (every rank, or the send/recv set's
/// peers): thread p < nranks signals peer p, then waits for peer p's signal. Every thread of the block
/// calls it; returns false (failure recorded) when a peer did not come in time.
__device__ __forceinline__ bool blockBarrier(const CollSyncArgs& s, const KernelNumbers& numbers, int phase, int step,
                                             BarrierAt at) {
  __syncthreads();  // the block's stores so far precede thread p's release (fences are cumulative)
  bool ok = true;
  const int peer = static_cast<int>(threadIdx.x);
  if (peer < s.nranks && peer != s.rank && ((s.peerMask >> peer) & 1u) != 0) {
    const unsigned long long value = valueFor(s, numbers, peer);
    const bool ordered = at == BarrierAt::End && s.peersStore;
    signalPeer(s, phase, peer, value, ordered);
    ok = awaitPeer(s, numbers, phase, static_cast<int>(blockIdx.x), peer, value, step,
                   at == BarrierAt::Start || ordered);
  }
  return __syncthreads_or(!ok) == 0;
}

/// A ring kernel's start, in place of blockBarrier's: block b of this rank tells
/// block b of every peer that it has started, as blockBarrier does, but waits only until block b of `next`
/// has (-1: none). A ring block stores only into the next rank (its output or stage, and flags; the free
/// flags it sends back follow the previous rank's ready flags of this call), so the next rank's start is all
/// it must await: by then that rank's kernels before this call, and the user's work on its stream, have
/// ended. The chain's first ranks thus start a call while the last ones still finish the previous one, as
/// NCCL's do. The slots and values (the call's number) are blockBarrier's, so the two kinds of start mix.
/// A timeout reports as kStepRingStart. The reduce collective's ring, which stores into a stage rather than
/// an output, signals only (`next` -1) and waits for the stage instead (colldev::awaitStageReleased).
__device__ __forceinline__ bool neighborStart(const CollSyncArgs& s, const KernelNumbers& numbers, int next) {
  const int peer = static_cast<int>(threadIdx.x);
  if (peer < s.nranks && peer != s.rank) signalPeer(s, kPhaseStart, peer, numbers.seq, false);
  bool ok = true;
  if (threadIdx.x == 0 && next >= 0) {
    ok = awaitPeer(s, numbers, kPhaseStart, static_cast<int>(blockIdx.x), next, numbers.seq, kStepRingStart, true);
  }
  return __syncthreads_or(!ok) == 0;
}

/// The end of a kernel that began with neighborStart, by threads 0..n-1 of block 0 after their work: waits
/// until block 0 of every peer has started this call (its neighborStart signal), so that once this rank's
/// kernel has ended every rank has started the call and so ended every kernel before it. The kernels that
/// follow rely on that as they would on a start barrier: the LL protocol's two parity slots hold because a
/// rank is never two calls ahead of any peer (without this wait, a ring's first rank could finish a call,
/// and start the next LL call, while a rank further down the chain still read the LL call before). In a
/// run of large calls the signals came long before. Relaxed: it orders only this kernel's end. A timeout
/// reports as kStepRingEnd.
__device__ __forceinline__ void awaitEveryStart(const CollSyncArgs& s, const KernelNumbers& numbers) {
  const int peer = static_cast<int>(threadIdx.x);
  if (blockIdx.x != 0 || peer >= s.nranks || peer == s.rank) return;
  awaitPeer(s, numbers, kPhaseStart, 0, peer, numbers.seq, kStepRingEnd, false);
}

/// Named barrier `id` (1-15; 0 is __syncthreads) of `threads` threads, a multiple of 32: bar.sync waits for
/// all of them, bar.arrive counts this warp in and goes on (a producer warp handing work to consumers that
/// sync on the same id). Both order the warp's earlier memory accesses before the consumers' later ones at
/// block scope.
__device__ __forceinline__ void barSync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void barArrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/// Writes every copy of a CollRankSync counter for the next kernel, write(copy) for each: copy b by thread 0
/// of block b, the copies past the grid by block 0's threads side by side (CollRankSync says why).
template <typename Write>
__device__ __forceinline__ void writeEveryCopy(Write&& write) {
  if (threadIdx.x == 0) write(blockIdx.x);
  if (blockIdx.x != 0) return;
  for (unsigned int copy = gridDim.x + threadIdx.x; copy < kCollMaxBlocks; copy += blockDim.x) write(copy);
}

/// Every block calls it last: advances this rank's counters for the next kernel (CollRankSync) -- thread 0
/// its block's own copy, block 0's threads also the copies past the grid, side by side -- storing the
/// numbers the block read at the start: no load, no atomic, no barrier, so no memory round trip at the
/// kernel's end. The counters are read only by the next kernel on this rank's stream, which starts after
/// this one has ended, so the kernel boundary orders them and no fence is needed (a fence here would also
/// wait for this thread's stores to peers to be acknowledged, a microsecond on NVLink).
__device__ __forceinline__ void finishKernel(const CollSyncArgs& s, const KernelNumbers& numbers) {
  volatile CollRankSync* sync = s.sync;
  writeEveryCopy([&](unsigned int copy) {
    sync->launches[copy] = numbers.launch;
    if (s.p2p) {
      for (int p = 0; p < s.nranks; ++p) {
        if (((s.peerMask >> p) & 1u) != 0) sync->pairSeq[p][copy] = numbers.peerSeq[p];
      }
    } else {
      sync->collSeq[copy] = numbers.seq;
    }
  });
}

}  // namespace peerlink::kernels::colldev
