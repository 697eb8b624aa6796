// The kernel of an async call across nodes (net/net_world.hpp, NetGroup::prepareAsync): on the caller's stream, it
// copies the call's data into the transport's pinned slots, tells the transport's thread (a ticket in pinned memory),
// waits for the transport's release (another ticket, written once the call's messages ran and its results lie in the
// slots), and copies the results out (at once where they are only the call's own data). One kernel instead of two
// copies, two events and a host wait: the stream's order carries the call, the host only polls and writes flags in its
// own memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace peerlink::kernels {

/// Bytes to copy: device memory and mapped pinned host memory, device-visible addresses (UVA).
struct AsyncCopyRange {
  const void* src = nullptr;
  void* dst = nullptr;
  std::uint64_t bytes = 0;
};

/// Copies in or out one call takes at most (a segment per block of a rail of up to that many nodes).
constexpr int kAsyncCallCopiesMax = 8;
/// Reductions a call's copy out makes at most, and sources each reads (the transport's kAsyncReductionsMax,
/// kAsyncReductionSourcesMax).
constexpr int kAsyncCallReductionsMax = 2;
constexpr int kAsyncCallReductionSourcesMax = 8;

/// dst = op(srcs[0], ..., srcs[nsrcs - 1]) of `count` elements, finishing (Avg divides), as the collective kernels
/// reduce (coll_reduce_ops.cuh): device memory and mapped pinned host memory.
struct AsyncReduceRange {
  void* dst = nullptr;
  const void* srcs[kAsyncCallReductionSourcesMax] = {};
  int nsrcs = 0;
  std::uint64_t count = 0;
};

struct AsyncCallArgs {
  AsyncCopyRange in[kAsyncCallCopiesMax];
  int ins = 0;
  AsyncCopyRange out[kAsyncCallCopiesMax];
  int outs = 0;
  std::uint64_t* copiedIn = nullptr;   ///< gets `ticket` once the copies in are visible to the host
  std::uint64_t* copiedOut = nullptr;  ///< gets `ticket` as the kernel ends: it reads the slots no more
  /// Whether the copies out wait for the release: false where they read only what the copies in wrote (the call's
  /// messages only leave this rank), and the kernel ends without waiting for them.
  bool awaitRelease = true;
  /// Where the call's messages only moved data (its plan's reductions deferred), what the copy out reduces after its
  /// copies: `reductions` ranges of `type` (a CollType) and `op` (a CollOp), Avg dividing by `divisor`.
  AsyncReduceRange reduce[kAsyncCallReductionsMax];
  int reductions = 0;
  int type = 0;
  int op = 0;
  int divisor = 1;
  const volatile std::uint64_t* release = nullptr;  ///< the transport's: the call ended once it is >= ticket
  /// The transport's: the first ticket that failed (0: none); from it on there are no results to copy out, and the
  /// caller's buffers are left as they are.
  const volatile std::uint64_t* failedFrom = nullptr;
  std::uint64_t* gaveUp = nullptr;  ///< gets `ticket` where the kernel stops waiting at its deadline
  std::uint64_t ticket = 0;
  /// A backstop: the transport writes its release at its own deadline whatever happened; a kernel still waiting
  /// after this long (the process's transport gone) leaves without copying out, and says so in `gaveUp`.
  std::uint64_t timeoutNs = 0;
};

/// Queues the call's kernel on `stream` (the current device's); one of its type and op where its copy out reduces.
/// Error(CudaError) for a failed launch.
void launchAsyncCall(const AsyncCallArgs& args, cudaStream_t stream);

/// Slot sets an async call may be given at most (the transport's kAsyncSets).
constexpr int kAsyncCallSetsMax = 4;

/// An async call captured into a CUDA graph, run each time the graph runs: the graph's start (coll/captured_calls.hpp)
/// leaves the run's ticket at `ticketOf`; the kernel waits for it there (and puts 0 back for the next run), takes the
/// slot set it names (ticket % sets) and that set's copies, and first waits for the set's last call (`sets` tickets
/// before) to have ended, both its kernel (copiedOut) and its messages (release), since no event orders two runs'
/// kernels. The call's kernel does it all, or two kernels do it in `part`s (net/replayed_steps.hpp): the first waits
/// and copies in, and leaves the ticket at `handedOn` for the second, which copies out (0: nothing to copy out; the
/// top bit set: the call had failed, nothing was copied in). A call whose messages only move data has its copy out
/// reduce too (`reductions` of every set, of `type` and `op`, Avg dividing by `divisor`).
struct ReplayedAsyncCallArgs {
  static constexpr int kWhole = 0;
  static constexpr int kCopyIn = 1;
  static constexpr int kCopyOut = 2;
  int part = kWhole;
  std::uint64_t* handedOn = nullptr;  ///< pinned host memory: where kCopyIn leaves the ticket for kCopyOut
  AsyncCopyRange in[kAsyncCallSetsMax][kAsyncCallCopiesMax];
  AsyncCopyRange out[kAsyncCallSetsMax][kAsyncCallCopiesMax];
  AsyncReduceRange reduce[kAsyncCallSetsMax][kAsyncCallReductionsMax];
  int ins = 0;  ///< copies in, and out, of every set (the sets differ only in the slots' addresses)
  int outs = 0;
  int reductions = 0;
  int type = 0;  ///< a CollType
  int op = 0;    ///< a CollOp
  int divisor = 1;
  int sets = 0;
  std::uint64_t* copiedIn[kAsyncCallSetsMax] = {};
  std::uint64_t* copiedOut[kAsyncCallSetsMax] = {};
  bool awaitRelease = true;
  const volatile std::uint64_t* release = nullptr;
  const volatile std::uint64_t* failedFrom = nullptr;
  std::uint64_t* gaveUp = nullptr;
  std::uint64_t* ticketOf = nullptr;  ///< pinned host memory: 0 until the graph's start writes the run's ticket
  /// What the graph's start writes where it starts no call (the communicator is gone); also what the kernel leaves in
  /// `gaveUp` where no ticket came within its deadline.
  std::uint64_t noTicket = ~std::uint64_t{0};
  std::uint64_t timeoutNs = 0;
};

/// Queues the replayed call's kernel on `stream` (capturing); one of its type and op where its copy out reduces.
/// Error(CudaError) for a failed launch.
void launchReplayedAsyncCall(const ReplayedAsyncCallArgs& args, cudaStream_t stream);

}  // namespace peerlink::kernels
