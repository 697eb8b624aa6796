// One world of ranks as the shim keeps it: peerlink's communicator (a WorldBackend), shared by the ncclComm of
// every local rank, and what the shim adds around it for this process's ranks:
//   - collective calls waiting for the other local ranks. NCCL's caller makes one call per local rank (inside a
//     group when one thread drives several GPUs); the shim issues a call only once every local rank has made
//     one, all of the set together -- the shim's own passes before (scaling, widening) then peerlink's calls,
//     which launch at the set's last one, then the passes after (narrowing, dividing) behind those kernels. With
//     one local rank (one process per GPU) every call is a set of its own and goes at once.
//   - each local rank's scratch block for those passes (grown, never shrunk; older blocks are kept until the
//     world ends, as a captured graph may still use them);
//   - window registrations and splits, collective over the local ranks in the same way: done at the last local
//     rank's call, the earlier callers' handles completed then.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nccl_api/backend.hpp"
#include "nccl_api/call_plan.hpp"
#include "nccl_api/result.hpp"

namespace peerlink::nccl {

/// A pre-multiplied sum's scalar (ncclRedOpCreatePreMulSum), copied into each call that uses it.
struct PreMulScalar {
  ncclDataType_t type = ncclFloat32;
  const void* device = nullptr;  ///< ncclScalarDevice: read by the kernel when it runs
  unsigned char value[8] = {};   ///< ncclScalarHostImmediate: the value at creation
};

/// One local rank's collective call.
struct CollectiveCall {
  Collective collective = Collective::AllReduce;
  int rank = 0;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  DataType type = DataType::U8;  ///< the carrier type (copies); reductions take plan->call's
  int root = 0;
  cudaStream_t stream = nullptr;
  std::optional<CallPlan> plan;  ///< reductions only
  ncclDataType_t ncclType = ncclUint8;
  std::optional<PreMulScalar> scalar;  ///< pre-multiplied sums only
};

/// A registration or split waiting for the other local ranks, seen by the handle that asked for it. The world
/// writes the result, then `done` (release); a reader that sees `done` (acquire) may read the rest.
struct Completion {
  std::atomic<bool> done{false};
  std::optional<Failure> failure;
};
struct WindowSlot : Completion {
  int id = -1;  ///< the world's window id once registered
};
class NativeWorld;
struct SplitSlot : Completion {
  std::shared_ptr<NativeWorld> world;  ///< null for a negative color
  int rank = -1;
};

class NativeWorld {
 public:
  /// `owner`: the thread that created the world, taken to drive every local rank until one calls from another.
  NativeWorld(std::shared_ptr<WorldBackend> backend, Platform& platform, std::thread::id owner);
  /// Ends the backend first (it waits for its own kernels only), then releases the scratch blocks.
  ~NativeWorld();
  NativeWorld(const NativeWorld&) = delete;
  NativeWorld& operator=(const NativeWorld&) = delete;

  WorldBackend& backend() { return *backend_; }
  int size() const { return size_; }
  const std::vector<int>& localRanks() const { return local_; }
  int device(int rank) const;

  /// Queues the call and issues every set completed. A failure of a set (peerlink's matching, a CUDA error)
  /// is thrown to this caller after every queued call of the world was discarded.
  void submit(const CollectiveCall& call);
  /// When every local rank that has no call queued last called from `caller`, no other thread will complete the
  /// queued set: discards the queued calls and says so ("ranks 0, 1 of local ranks 0-3 called ..."); else "".
  std::string abandonUnmatchedBy(std::thread::id caller);

  /// ncclCommAbort of `rank`: peerlink's abort (every kernel of the world stops, the other processes are told),
  /// and every later call here fails at once naming it.
  void abort(int rank) noexcept;
  /// `rank`'s handle is gone: a later set, which would need its call, fails at once rather than waiting for it.
  void forget(int rank);

  /// Registers `buffer` for `rank` once every local rank asked (peerlink's registerWindow); `slot` completes then.
  void requestWindow(int rank, void* buffer, std::size_t bytes, const std::shared_ptr<WindowSlot>& slot);
  /// Deregisters window `id` once every local rank asked.
  void requestWindowRemoval(int rank, int id);
  /// Splits once every local rank asked; `slot` (null for a negative color) receives the new world and rank.
  void requestSplit(int rank, int color, int key, const std::shared_ptr<SplitSlot>& slot);

 private:
  struct Scratch {
    void* block = nullptr;
    std::size_t capacity = 0;
    std::vector<void*> retired;
    /// Blocks of calls captured into CUDA graphs, one each: a graph replays whenever and on whichever stream the
    /// application says, so nothing could order it against another call's use of a shared block.
    std::vector<void*> captured;
    cudaStream_t lastStream = nullptr;
    bool used = false;
  };
  /// A call issued with work still to run after the backend's (its plan's `after` steps), and the scratch it used.
  struct Issued {
    const CollectiveCall* call;
    void* scratch;
  };
  struct WindowRequest {
    void* buffer;
    std::size_t bytes;
    std::shared_ptr<WindowSlot> slot;
  };
  struct SplitRequest {
    int color;
    int key;
    std::shared_ptr<SplitSlot> slot;
  };

  std::size_t indexOf(int rank) const;
  void issue(const CollectiveCall& call, std::vector<Issued>& issued);
  void runAfter(const Issued& issued);
  void* scratchFor(std::size_t index, std::size_t bytes, cudaStream_t stream);
  void transform(const CollectiveCall& call, const TransformStep& step, void* scratch);
  void callBackend(const CollectiveCall& call, const void* send, void* recv);
  void completeSplit();

  std::shared_ptr<WorldBackend> backend_;
  Platform& platform_;
  int size_ = 0;
  std::vector<int> local_;
  std::vector<int> devices_;  // per local index

  std::mutex mutex_;
  std::string stopped_;                             // why calls fail at once ("" while they do not)
  std::vector<bool> forgotten_;                     // per local index
  std::vector<std::deque<CollectiveCall>> queued_;  // per local index
  std::vector<std::thread::id> lastCaller_;         // per local index
  std::vector<Scratch> scratch_;                    // per local index
  std::vector<std::deque<WindowRequest>> windows_;  // per local index
  std::vector<std::pair<int, std::vector<bool>>> removals_;
  std::vector<std::optional<SplitRequest>> splits_;  // per local index
};

/// The scratch block size to allocate for a use of `bytes` when the block holds `capacity`: 0 when it fits, else
/// at least twice the old block and at least 1 MiB, in whole MiB.
std::size_t grownScratchCapacity(std::size_t capacity, std::size_t bytes);

}  // namespace peerlink::nccl
