#include <type_traits>

#include "core/cuda_check.hpp"
#include "kernels/async_call.cuh"
#include "kernels/coll_reduce_ops.cuh"
#include "kernels/device_status.cuh"
#include "kernels/kernel_preload.cuh"

namespace peerlink::kernels {
namespace {

constexpr int kAsyncCallThreads = 512;

// Words each thread loads before it stores them: one block alone reads host memory across PCIe, where a load waits
// about a microsecond, so its rate is the bytes it has in flight: 512 threads x 16 uint4 = 128 KiB a round.
constexpr int kWordsInFlight = 16;

// Sources in pinned host memory are loaded with __ldcv (no cached copy: the host rewrites the slots every call).
template <typename Word>
__device__ __forceinline__ Word loadWord(const Word* src, bool fromHost) {
  return fromHost ? __ldcv(src) : *src;
}

template <typename Word>
__device__ __forceinline__ void copyWords(const Word* src, Word* dst, std::uint64_t words, bool fromHost) {
  const std::uint64_t stride = blockDim.x;
  for (std::uint64_t i = threadIdx.x; i < words; i += kWordsInFlight * stride) {
    Word held[kWordsInFlight];
#pragma unroll
    for (int k = 0; k < kWordsInFlight; ++k) {
      if (i + k * stride < words) held[k] = loadWord(src + i + k * stride, fromHost);
    }
#pragma unroll
    for (int k = 0; k < kWordsInFlight; ++k) {
      if (i + k * stride < words) dst[i + k * stride] = held[k];
    }
  }
}

__device__ __forceinline__ void copyRange(const AsyncCopyRange& range, bool fromHost) {
  const auto s = reinterpret_cast<std::uintptr_t>(range.src);
  const auto d = reinterpret_cast<std::uintptr_t>(range.dst);
  const std::uint64_t n = range.bytes;
  if (((s | d | n) & 15) == 0) {
    copyWords(static_cast<const uint4*>(range.src), static_cast<uint4*>(range.dst), n / 16, fromHost);
  } else if (((s | d | n) & 3) == 0) {
    copyWords(static_cast<const unsigned int*>(range.src), static_cast<unsigned int*>(range.dst), n / 4, fromHost);
  } else {
    copyWords(static_cast<const unsigned char*>(range.src), static_cast<unsigned char*>(range.dst), n, fromHost);
  }
}

// A call's copies in (unless `skip`), after its ticket is known, then the ticket to copiedIn. Every thread of the
// block calls it.
__device__ __forceinline__ void copyIn(const AsyncCopyRange* in, int ins, std::uint64_t* copiedIn, std::uint64_t ticket,
                                       bool skip = false) {
  if (!skip) {
    for (int i = 0; i < ins; ++i) copyRange(in[i], false);
  }
  __syncthreads();
  // The release store is cumulative: the block's stores before the barrier reach the host before the ticket does.
  if (threadIdx.x == 0) storeReleaseSys(copiedIn, ticket);
}

// A word of 16 bytes at word `index` of `data`: one load where `data` is 16-byte aligned, else an element at a time
// (the caller's own input off the boundary, in device memory: a reduce-scatter's block r of an odd count). Loaded as
// copyWords loads pinned memory (no cached copy).
template <typename S>
__device__ __forceinline__ uint4 loadWordOf(const void* data, bool aligned, std::uint64_t index) {
  if (aligned) return __ldcv(static_cast<const uint4*>(data) + index);
  constexpr int kElems = static_cast<int>(sizeof(uint4) / sizeof(S));
  union {
    uint4 raw;
    S e[kElems];
  } word;
  const volatile S* elements = static_cast<const volatile S*>(data) + index * kElems;
#pragma unroll
  for (int e = 0; e < kElems; ++e) word.e[e] = elements[e];
  return word.raw;
}

template <typename S>
__device__ __forceinline__ void storeWordOf(void* data, bool aligned, std::uint64_t index, uint4 value) {
  if (aligned) {
    static_cast<uint4*>(data)[index] = value;
    return;
  }
  constexpr int kElems = static_cast<int>(sizeof(uint4) / sizeof(S));
  union {
    uint4 raw;
    S e[kElems];
  } word;
  word.raw = value;
  S* elements = static_cast<S*>(data) + index * kElems;
#pragma unroll
  for (int e = 0; e < kElems; ++e) elements[e] = word.e[e];
}

// dst = op(srcs...) of one range, finishing, in rank order as the collective kernels reduce, 16 bytes at a time (each
// address on its own: the peers' sources in pinned memory, on the 16-byte boundary, are read a word a load whatever
// the caller's buffers are), the tail an element at a time; every thread of the block calls it. The words a thread
// holds are bounded by what it accumulates: 32 values of the accumulation type.
template <int Type, int Op>
__device__ void reduceRange(const AsyncReduceRange& range, int divisor) {
  using Reducer = colldev::PackReducer<Type, Op, uint4>;
  using E = colldev::Elem<Type>;
  using S = typename E::S;
  using A = typename E::A;
  constexpr int kElems = Reducer::kElems;
  constexpr int kWords = kElems <= 4 ? 8 : kElems <= 8 ? 4 : 2;
  const auto aligned = [](const void* data) { return (reinterpret_cast<std::uintptr_t>(data) & 15) == 0; };
  const bool dstAligned = aligned(range.dst);
  const std::uint64_t words = range.count / kElems;
  const std::uint64_t stride = blockDim.x;
  for (std::uint64_t base = threadIdx.x; base < words; base += kWords * stride) {
    Reducer acc[kWords];
    for (int j = 0; j < range.nsrcs; ++j) {
      const void* src = range.srcs[j];
      const bool srcAligned = aligned(src);
      uint4 held[kWords];
#pragma unroll
      for (int k = 0; k < kWords; ++k) {
        if (base + k * stride < words) held[k] = loadWordOf<S>(src, srcAligned, base + k * stride);
      }
#pragma unroll
      for (int k = 0; k < kWords; ++k) {
        if (base + k * stride < words) {
          if (j == 0) {
            acc[k].first(held[k]);
          } else {
            acc[k].add(held[k]);
          }
        }
      }
    }
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
      if (base + k * stride < words) storeWordOf<S>(range.dst, dstAligned, base + k * stride, acc[k].result(divisor));
    }
  }
  // The tail, an element at a time.
  S* dst = static_cast<S*>(range.dst);
  for (std::uint64_t i = words * kElems + threadIdx.x; i < range.count; i += stride) {
    A acc = E::load(static_cast<const volatile S*>(range.srcs[0])[i]);
    for (int j = 1; j < range.nsrcs; ++j) {
      acc = colldev::applyOp<A, Op>(acc, E::load(static_cast<const volatile S*>(range.srcs[j])[i]));
    }
    dst[i] = E::store(colldev::finishOp<A, Op>(acc, divisor));
  }
}

// What a call's copy out reduces after its copies: nothing, or `count` ranges of one type and op.
struct NoReductions {
  __device__ void operator()() const {}
};

template <int Type, int Op>
struct ReduceRanges {
  const AsyncReduceRange* ranges;
  int count;
  int divisor;
  __device__ void operator()() const {
    for (int r = 0; r < count; ++r) reduceRange<Type, Op>(ranges[r], divisor);
  }
};

// A call's copies out, after its copies in: the wait for the release where the call awaits it, the copies and then
// its reductions unless the call failed, the ticket to copiedOut. `skip`: the copies in were left out (the call had
// failed): nothing to wait for or copy. Every thread of the block calls it.
template <typename Reduce>
__device__ __forceinline__ void copyOut(const AsyncCopyRange* out, int outs, std::uint64_t* copiedOut,
                                        bool awaitRelease, const volatile std::uint64_t* release,
                                        const volatile std::uint64_t* failedFrom, std::uint64_t* gaveUp,
                                        std::uint64_t ticket, std::uint64_t timeoutNs, bool skip, Reduce reduce) {
  __shared__ bool copies;
  if (threadIdx.x == 0) {
    copies = !skip;
    if (awaitRelease && !skip) {
      std::uint64_t observed = 0;
      const bool released = waitFlagAtLeast(release, ticket, Deadline::after(timeoutNs), &observed);
      if (!released) storeReleaseSys(gaveUp, ticket);
      const std::uint64_t failed = released ? loadRelaxedSys(failedFrom) : 0;
      copies = released && (failed == 0 || failed > ticket);
    }
  }
  __syncthreads();
  if (copies) {
    for (int i = 0; i < outs; ++i) copyRange(out[i], true);
    // (A reduction may read what another thread's copy out wrote: the block's copies end first.)
    if constexpr (!std::is_same<Reduce, NoReductions>::value) __syncthreads();
    reduce();
  }
  __syncthreads();
  // After the barrier every thread's reads of the slots have returned: each loaded word fed a store issued before it.
  // The flag says only that, and relies on it (the memory model alone does not order a relaxed store after another
  // thread's loads at a block barrier); a release at system scope would also wait for the copies out to reach the
  // whole system, about a microsecond a call.
  if (threadIdx.x == 0) storeRelaxedSys(copiedOut, ticket);
}

template <typename Reduce>
__device__ __forceinline__ void asyncCall(const AsyncCallArgs& args, Reduce reduce) {
  copyIn(args.in, args.ins, args.copiedIn, args.ticket);
  copyOut(args.out, args.outs, args.copiedOut, args.awaitRelease, args.release, args.failedFrom, args.gaveUp,
          args.ticket, args.timeoutNs, false, reduce);
}

__global__ void __launch_bounds__(kAsyncCallThreads) asyncCallKernel(AsyncCallArgs args) {
  asyncCall(args, NoReductions{});
}

// An async call whose copy out reduces, one instantiation per type and op.
template <int Type, int Op>
__global__ void __launch_bounds__(kAsyncCallThreads) reducingAsyncCallKernel(AsyncCallArgs args) {
  asyncCall(args, ReduceRanges<Type, Op>{args.reduce, args.reductions, args.divisor});
}

// Thread 0 of a replayed call's kernel that copies in: waits for the run's ticket, then for its slot set to be free.
// Returns the ticket, or 0 where the call's copies are left out (no ticket: the world reports it, gaveUp).
__device__ std::uint64_t awaitReplayedTicket(const ReplayedAsyncCallArgs& args) {
  // Usually every word is there at once: read them together (each read of pinned memory is a round trip across
  // PCIe), then wait for what was not.
  const auto sets = static_cast<std::uint64_t>(args.sets);
  std::uint64_t seen = loadRelaxedSys(args.ticketOf);
  const std::uint64_t released = loadRelaxedSys(args.release);
  std::uint64_t ended[kAsyncCallSetsMax];
  for (int s = 0; s < kAsyncCallSetsMax; ++s) ended[s] = s < args.sets ? loadRelaxedSys(args.copiedOut[s]) : 0;
  const Deadline deadline = Deadline::after(args.timeoutNs);
  const bool came = seen != 0 || waitFlagAtLeast(args.ticketOf, 1, deadline, &seen);
  if (!came) {
    storeReleaseSys(args.gaveUp, args.noTicket);
    return 0;
  }
  storeRelaxedSys(args.ticketOf, 0);    // for the next run (which starts after this run's kernels ended)
  if (seen == args.noTicket) return 0;  // nothing started: nothing to copy, no flag to write
  const std::uint64_t ticket = seen;
  if (ticket > sets) {
    // The set's last call: its kernel no longer reads the slots, and its messages no longer use them.
    const std::size_t set = ticket % sets;
    std::uint64_t observed = 0;
    const bool setFree =
        (ended[set] >= ticket - sets || waitFlagAtLeast(args.copiedOut[set], ticket - sets, deadline, &observed)) &&
        (released >= ticket - sets || waitFlagAtLeast(args.release, ticket - sets, deadline, &observed));
    if (!setFree) {
      storeReleaseSys(args.gaveUp, ticket);
      return 0;
    }
  }
  acquireFenceSys();  // the slots' last readers and writers are done before this call's copies
  return ticket;
}

// What a replayed call's CopyIn kernel adds to the ticket it hands on where the call had failed (tickets stay far
// below).
constexpr std::uint64_t kHandedFailed = std::uint64_t{1} << 63;

// A replayed call, its copy out reducing where `Reduce` says (ReduceRanges of the run's slot set's ranges).
template <typename Reduce>
__device__ __forceinline__ void replayedAsyncCall(const ReplayedAsyncCallArgs& args) {
  __shared__ std::uint64_t ticket;
  __shared__ bool failed;  // the call had failed before its copies in: they, and so its copies out, are left out
  if (threadIdx.x == 0) {
    if (args.part == ReplayedAsyncCallArgs::kCopyOut) {
      const std::uint64_t handed = loadRelaxedSys(args.handedOn);  // the CopyIn kernel before it on the stream's
      ticket = handed & ~kHandedFailed;
      failed = (handed & kHandedFailed) != 0;
    } else {
      ticket = awaitReplayedTicket(args);
      // A set freed by a failed call (released at once) may still be read by that call's abandoned messages: a call
      // already failed copies nothing into it. (Read after the set's release was seen: the failure is marked first.)
      const std::uint64_t failedFrom = ticket != 0 ? loadRelaxedSys(args.failedFrom) : 0;
      failed = failedFrom != 0 && failedFrom <= ticket;
      if (args.part == ReplayedAsyncCallArgs::kCopyIn) {
        storeRelaxedSys(args.handedOn, ticket | (failed ? kHandedFailed : 0));
      }
    }
  }
  __syncthreads();
  if (ticket == 0) return;  // the call's copies are left out
  const std::size_t set = ticket % static_cast<std::uint64_t>(args.sets);
  if (args.part != ReplayedAsyncCallArgs::kCopyOut) {
    copyIn(args.in[set], args.ins, args.copiedIn[set], ticket, failed);
  }
  if (args.part != ReplayedAsyncCallArgs::kCopyIn) {
    Reduce reduce;
    if constexpr (!std::is_same<Reduce, NoReductions>::value)
      reduce = {args.reduce[set], args.reductions, args.divisor};
    copyOut(args.out[set], args.outs, args.copiedOut[set], args.awaitRelease, args.release, args.failedFrom,
            args.gaveUp, ticket, args.timeoutNs, failed, reduce);
  }
}

__global__ void __launch_bounds__(kAsyncCallThreads) replayedAsyncCallKernel(ReplayedAsyncCallArgs args) {
  replayedAsyncCall<NoReductions>(args);
}

// A replayed call whose copy out reduces (its CopyOut or Whole part), one instantiation per type and op.
template <int Type, int Op>
__global__ void __launch_bounds__(kAsyncCallThreads) replayedReducingCallKernel(ReplayedAsyncCallArgs args) {
  replayedAsyncCall<ReduceRanges<Type, Op>>(args);
}

}  // namespace

namespace detail {

void preloadAsyncCallKernels() {
  loadKernel(asyncCallKernel, "asyncCallKernel");
  loadKernel(replayedAsyncCallKernel, "replayedAsyncCallKernel");
  forEachTypeOp([](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    loadKernel(reducingAsyncCallKernel<kType, kOp>, "reducingAsyncCallKernel");
    loadKernel(replayedReducingCallKernel<kType, kOp>, "replayedReducingCallKernel");
  });
}

}  // namespace detail

void launchAsyncCall(const AsyncCallArgs& args, cudaStream_t stream) {
  ensureKernelsLoaded();  // no module may load lazily while the kernel waits for the host
  if (args.reductions > 0) {
    detail::dispatchTypeOp(static_cast<CollType>(args.type), static_cast<CollOp>(args.op),
                           [&](auto typeConstant, auto opConstant) {
                             constexpr int kType = decltype(typeConstant)::value;
                             constexpr int kOp = decltype(opConstant)::value;
                             reducingAsyncCallKernel<kType, kOp><<<1, kAsyncCallThreads, 0, stream>>>(args);
                           });
  } else {
    asyncCallKernel<<<1, kAsyncCallThreads, 0, stream>>>(args);
  }
  PEERLINK_CUDA_CHECK_LAUNCH();
}

void launchReplayedAsyncCall(const ReplayedAsyncCallArgs& args, cudaStream_t stream) {
  ensureKernelsLoaded();
  if (args.reductions > 0 && args.part != ReplayedAsyncCallArgs::kCopyIn) {
    detail::dispatchTypeOp(static_cast<CollType>(args.type), static_cast<CollOp>(args.op),
                           [&](auto typeConstant, auto opConstant) {
                             constexpr int kType = decltype(typeConstant)::value;
                             constexpr int kOp = decltype(opConstant)::value;
                             replayedReducingCallKernel<kType, kOp><<<1, kAsyncCallThreads, 0, stream>>>(args);
                           });
  } else {
    replayedAsyncCallKernel<<<1, kAsyncCallThreads, 0, stream>>>(args);
  }
  PEERLINK_CUDA_CHECK_LAUNCH();
}

}  // namespace peerlink::kernels
