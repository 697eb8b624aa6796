#include "core/cuda_check.hpp"
#include "kernels/async_call.cuh"
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

// One call, after its ticket is known: copies in, the ticket to copiedIn, the wait for the release where the call
// awaits it, copies out unless the call failed, the ticket to copiedOut. Every thread of the block calls it.
__device__ __forceinline__ void runCall(const AsyncCopyRange* in, int ins, const AsyncCopyRange* out, int outs,
                                        std::uint64_t* copiedIn, std::uint64_t* copiedOut, bool awaitRelease,
                                        const volatile std::uint64_t* release, const volatile std::uint64_t* failedFrom,
                                        std::uint64_t* gaveUp, std::uint64_t ticket, std::uint64_t timeoutNs) {
  for (int i = 0; i < ins; ++i) copyRange(in[i], false);
  __syncthreads();
  // The release store is cumulative: the block's stores before the barrier reach the host before the ticket does.
  if (threadIdx.x == 0) storeReleaseSys(copiedIn, ticket);
  __shared__ bool copyOut;
  if (threadIdx.x == 0) {
    copyOut = true;
    if (awaitRelease) {
      std::uint64_t observed = 0;
      const bool released = waitFlagAtLeast(release, ticket, Deadline::after(timeoutNs), &observed);
      if (!released) storeReleaseSys(gaveUp, ticket);
      const std::uint64_t failed = released ? loadRelaxedSys(failedFrom) : 0;
      copyOut = released && (failed == 0 || failed > ticket);
    }
  }
  __syncthreads();
  if (copyOut) {
    for (int i = 0; i < outs; ++i) copyRange(out[i], true);
  }
  __syncthreads();
  // After the barrier every thread's reads of the slots have returned: each loaded word fed a store issued before it.
  // The flag says only that, and relies on it (the memory model alone does not order a relaxed store after another
  // thread's loads at a block barrier); a release at system scope would also wait for the copies out to reach the
  // whole system, about a microsecond a call.
  if (threadIdx.x == 0) storeRelaxedSys(copiedOut, ticket);
}

__global__ void __launch_bounds__(kAsyncCallThreads) asyncCallKernel(AsyncCallArgs args) {
  runCall(args.in, args.ins, args.out, args.outs, args.copiedIn, args.copiedOut, args.awaitRelease, args.release,
          args.failedFrom, args.gaveUp, args.ticket, args.timeoutNs);
}

__global__ void __launch_bounds__(kAsyncCallThreads) replayedAsyncCallKernel(ReplayedAsyncCallArgs args) {
  __shared__ std::uint64_t ticket;
  __shared__ bool setFree;
  if (threadIdx.x == 0) {
    // Usually every word is there at once: read them together (each read of pinned memory is a round trip across
    // PCIe), then wait for what was not.
    const auto sets = static_cast<std::uint64_t>(args.sets);
    std::uint64_t seen = loadRelaxedSys(args.ticketOf);
    const std::uint64_t released = loadRelaxedSys(args.release);
    std::uint64_t ended[kAsyncCallSetsMax];
    for (int s = 0; s < kAsyncCallSetsMax; ++s) ended[s] = s < args.sets ? loadRelaxedSys(args.copiedOut[s]) : 0;
    const Deadline deadline = Deadline::after(args.timeoutNs);
    setFree = seen != 0 || waitFlagAtLeast(args.ticketOf, 1, deadline, &seen);
    ticket = seen;
    if (setFree) storeRelaxedSys(args.ticketOf, 0);  // for the next run (which starts after this kernel ended)
    if (!setFree) storeReleaseSys(args.gaveUp, args.noTicket);
    if (ticket == args.noTicket) setFree = false;  // nothing started: nothing to copy, no flag to write
    if (setFree && ticket > sets) {
      // The set's last call: its kernel no longer reads the slots, and its messages no longer use them.
      const std::size_t set = ticket % sets;
      std::uint64_t observed = 0;
      setFree =
          (ended[set] >= ticket - sets || waitFlagAtLeast(args.copiedOut[set], ticket - sets, deadline, &observed)) &&
          (released >= ticket - sets || waitFlagAtLeast(args.release, ticket - sets, deadline, &observed));
      if (!setFree) storeReleaseSys(args.gaveUp, ticket);
    }
    acquireFenceSys();  // the slots' last readers and writers are done before this call's copies
  }
  __syncthreads();
  const std::size_t set = ticket % static_cast<std::uint64_t>(args.sets);
  // No ticket, or a set never freed: the call's copies are left out (the world reports it: gaveUp).
  if (!setFree) return;
  runCall(args.in[set], args.ins, args.out[set], args.outs, args.copiedIn[set], args.copiedOut[set], args.awaitRelease,
          args.release, args.failedFrom, args.gaveUp, ticket, args.timeoutNs);
}

}  // namespace

namespace detail {

void preloadAsyncCallKernels() {
  loadKernel(asyncCallKernel, "asyncCallKernel");
  loadKernel(replayedAsyncCallKernel, "replayedAsyncCallKernel");
}

}  // namespace detail

void launchAsyncCall(const AsyncCallArgs& args, cudaStream_t stream) {
  ensureKernelsLoaded();  // no module may load lazily while the kernel waits for the host
  asyncCallKernel<<<1, kAsyncCallThreads, 0, stream>>>(args);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

void launchReplayedAsyncCall(const ReplayedAsyncCallArgs& args, cudaStream_t stream) {
  ensureKernelsLoaded();
  replayedAsyncCallKernel<<<1, kAsyncCallThreads, 0, stream>>>(args);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

}  // namespace peerlink::kernels
