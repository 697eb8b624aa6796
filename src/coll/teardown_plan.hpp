// What a communicator's teardown does with its buffers, decided from what it found (pure, tested on CPU in
// test_coll_teardown): how long it waits for its own kernels, whether it stops those still queued, and whether its
// buffers are freed (once no GPU work of the process runs: gpu_work.hpp) or held until the process exits.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace peerlink::coll {

/// What the teardown found.
struct TeardownFacts {
  bool aborted = false;          ///< its abort word was raised (abort(), a lost peer) before the teardown
  bool ownWorkFinished = false;  ///< every kernel and copy it queued has finished (within ownWorkBudget)
  bool ownWorkTracked = true;    ///< every launch was tracked (an event could always be recorded)
  bool spansProcesses = false;   ///< some rank lives in another process
  bool kernelsGaveUp = false;    ///< one of its kernels reported a stall or an abort (a failure record)
  bool legacyIpcArena = false;   ///< a local rank's arena is exported by legacy IPC (cudaIpcGetMemHandle)
};

enum class TeardownRelease {
  WhenIdle,   ///< freed now, or once no GPU work of this process runs (releaseWhenIdle)
  UntilExit,  ///< never freed by this process: the driver frees it at exit
};

struct TeardownPlan {
  TeardownRelease release = TeardownRelease::WhenIdle;
  /// Raise the abort word: a kernel of its own still queued (behind another's work on a shared stream) then leaves
  /// at its first wait instead of waiting for peers that are gone.
  bool raiseAbortWord = false;
  std::string reason;  ///< for the log; empty for a teardown that went as expected
};

TeardownPlan planTeardown(const TeardownFacts& facts);

/// How long the teardown waits for its own kernels: once aborted they leave at their next poll of the abort word
/// (microseconds), so kAbortedDrain is room for kernels queued behind short work on the same stream; otherwise
/// they may be waiting for peers, and give up at their deadline (`timeoutNs`, PEERLINK_TIMEOUT_MS) plus
/// kDrainMargin, as a destroy waits for what the communicator was asked to do (ncclCommDestroy does too).
std::chrono::milliseconds ownWorkBudget(bool aborted, std::uint64_t timeoutNs);

constexpr std::chrono::milliseconds kAbortedDrain{2000};
constexpr std::chrono::milliseconds kDrainMargin{1000};

/// Whether a teardown whose own work did not finish within `rounds` budgets (ownWorkBudget) waits one more before it
/// raises the abort word: while none of its kernels has given up, the work still queued is healthy (a destroy right
/// after a long run of calls; a kernel stalled on a peer records a failure at its deadline), and a destroy finishes
/// it as NCCL's does -- up to kHealthyDrainRounds budgets in all, so that a wait always ends.
bool drainsAnotherRound(bool aborted, bool kernelsGaveUp, int rounds);
constexpr int kHealthyDrainRounds = 10;

/// How long the teardown then waits for the rest of the process's GPU work before holding its buffers back: a
/// healthy call of another communicator ends within it, one stalled on a hung peer does not.
constexpr std::chrono::milliseconds kIdleWait{500};

}  // namespace peerlink::coll
