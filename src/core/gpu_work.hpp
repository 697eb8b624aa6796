// Work that parts of peerlink queued on the GPUs (a communicator's kernels, the NCCL API's passes), tracked by events
// so that its end is known without synchronizing a device; and resources whose release waits until none of that
// work runs.
//
// A device-wide wait (cudaDeviceSynchronize, or a free that synchronizes) waits for every kernel on the device:
// another communicator's too, stalled on a hung peer until its deadline (an hour under the NCCL API). What the CUDA
// 13.0 reference says of the calls that release peerlink's resources:
//   - cudaFree "may perform implicit synchronization", except for memory of the stream-ordered allocator, which
//     peerlink does not use (its buffers come from cudaMalloc, cuMemCreate and cudaHostAlloc);
//   - cudaFreeHost, cudaHostUnregister, cudaIpcCloseMemHandle: nothing either way; cuMemUnmap "exhibits synchronous
//     behavior for most use cases" without saying for which work;
//   - cudaStreamDestroy, cudaEventDestroy, cuGraphExecDestroy return at once, the resources going when the device
//     is done with them.
// So every memory release is taken to possibly wait for the device, and is made only once no tracked work runs;
// streams, events and graphs are released at any time.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "peerlink/cuda.hpp"

namespace peerlink {

using WorkClock = std::chrono::steady_clock;

/// Something whose GPU work may still run. Registered with the process's list (registerGpuWork) while it lives, so
/// that held resources (below) are released only once it has finished.
class GpuWork {
 public:
  virtual ~GpuWork() = default;
  /// Whether all its work has finished, asked without waiting.
  virtual bool finished() const noexcept = 0;
};

/// The work one owner queued on its streams: an event recorded behind the latest of it on each (device, stream).
/// Registers itself while it lives. Thread-safe.
class WorkTracker final : public GpuWork {
 public:
  WorkTracker();
  ~WorkTracker() override;  ///< unregisters; destroying the events does not wait for them
  WorkTracker(const WorkTracker&) = delete;
  WorkTracker& operator=(const WorkTracker&) = delete;

  /// Records an event behind the work queued so far on `stream`, a stream of `device` (made current for the legacy
  /// and per-thread default streams, which stand for the current device's). Not for a stream being captured: a
  /// graph's replays are its owner's to finish. Throws Error when CUDA refuses.
  void recordAfter(int device, cudaStream_t stream);
  /// Marks that some work could not be tracked (recordAfter threw): finished() can no longer be believed.
  void lostTrack() noexcept;
  bool tracksAll() const noexcept;

  /// Whether every recorded event has completed. An event whose query fails counts as complete: its context has
  /// failed and runs nothing more.
  bool finished() const noexcept override;
  /// Polls finished() until it holds or `deadline` passes; whether it holds.
  bool waitFinished(WorkClock::time_point deadline) const noexcept;
  /// The streams whose work has not finished, for a log line.
  std::size_t unfinishedStreams() const noexcept;

 private:
  struct Entry {
    int device = -1;
    cudaStream_t stream = nullptr;
    std::thread::id thread;  ///< for cudaStreamPerThread, which is a stream of each thread's own
    Event event;
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
  bool lost_ = false;
};

/// Adds `work` to the list the held resources wait for / removes it (never waits). The caller keeps it alive while
/// registered.
void registerGpuWork(const GpuWork* work);
void unregisterGpuWork(const GpuWork* work) noexcept;

/// Whether every registered work has finished now.
bool gpuWorkFinished() noexcept;

/// Resources to release once no registered work runs: destroying `held` releases them.
struct HeldResources {
  std::string what;            ///< for the log: "the communicator of 2 ranks (ranks 0 here, on GPU 0)"
  std::size_t bytes = 0;       ///< the memory they hold (device and pinned), for the log and the counts
  std::shared_ptr<void> held;  ///< its last owner
};

/// Releases `resources` once every registered work has finished, polling until `deadline` at most; past it they are
/// held, and released by the first releaseHeldIfIdle that finds the work finished (a communicator's creation and
/// destruction call it), or never, the driver freeing their memory when the process exits. Whether they were
/// released now. Logs what it held back, and why (`why` appended), as a warning.
bool releaseWhenIdle(HeldResources resources, WorkClock::time_point deadline, const std::string& why = "") noexcept;
/// Holds `resources` until the process exits (never released here). Logs it as a warning, with `why`.
void holdUntilExit(HeldResources resources, const std::string& why) noexcept;
/// Releases every held resource (but those held until exit) when every registered work has finished now; how many.
std::size_t releaseHeldIfIdle() noexcept;

struct HeldCounts {
  std::size_t waiting = 0;  ///< held until the registered work has finished
  std::size_t waitingBytes = 0;
  std::size_t untilExit = 0;  ///< held until the process exits
  std::size_t untilExitBytes = 0;
  std::size_t releasedLater = 0;  ///< released by a later releaseHeldIfIdle, so far
};
/// What is held now, and what was released later so far (for tests and the log).
HeldCounts heldCounts();

}  // namespace peerlink
