// A communicator's end, waiting only for its own work: every launch records an event behind it on the caller's
// stream (LaunchTracking), and the teardown waits for those (within ownWorkBudget), never for the device, so a
// communicator aborted while another one's kernel is stalled on a hung peer ends at once. Its buffers are freed
// once no GPU work of the process runs, else held for later (gpu_work.hpp), as freeing may wait for the device.
#pragma once

#include <mutex>
#include <optional>
#include <vector>

#include "coll/comm_state.hpp"
#include "peerlink/cuda.hpp"

namespace peerlink::coll {

/// Records the events the teardown waits for behind the local ranks' calls of `calls`, each on its stream, when it
/// goes out of scope -- after their launches, or after a launch that threw part way (what was queued is covered).
/// A launch is complete when the caller's stream passes it: every launcher joins its side streams (copies, staging,
/// plan lanes) back into the caller's stream, so one event there covers them. Calls being captured are skipped (a
/// graph's replays are the application's to finish); `capturing` unknown (send/recv groups): asked per stream.
/// While it lives, a call of the set on cudaStreamPerThread keeps the launches on the calling thread
/// (CommState::launchOnCaller): that stream is each thread's own, and a launch thread would use its own instead.
class LaunchTracking {
 public:
  LaunchTracking(CommState& state, const std::vector<CallArgs>& calls, std::optional<bool> capturing);
  ~LaunchTracking();
  LaunchTracking(const LaunchTracking&) = delete;
  LaunchTracking& operator=(const LaunchTracking&) = delete;

 private:
  CommState& state_;
  const std::vector<CallArgs>& calls_;
  std::optional<bool> capturing_;
};

/// Ends a communicator of this host (comm_setup.hpp made it): stops its launch threads, waits for its own work
/// (ownWorkBudget; raising the abort word when it did not finish), then frees its buffers once no GPU work of the
/// process runs, waiting kIdleWait at most, or holds them for a later release (teardown_plan.hpp says which, and
/// the log says what was held and why). `state` and `abortWord` (the word its kernels read, mapped host memory,
/// which the bootstraps' watchdogs may raise under `abortWordMutex` while the teardown waits) are moved out, so they
/// outlive the caller when held. Never throws, never waits on another communicator's work.
void retireCommunicator(CommState& state, PinnedBuffer& abortWord, std::mutex& abortWordMutex) noexcept;

}  // namespace peerlink::coll
