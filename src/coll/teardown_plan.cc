// A communicator's teardown decided from what it found (teardown_plan.hpp).
#include "coll/teardown_plan.hpp"

namespace peerlink::coll {

TeardownPlan planTeardown(const TeardownFacts& facts) {
  TeardownPlan plan;
  plan.raiseAbortWord = !facts.ownWorkFinished && !facts.aborted;
  if (!facts.ownWorkTracked) {
    plan.release = TeardownRelease::UntilExit;
    plan.reason = "some of its launches could not be tracked, so when its kernels end is unknown";
    return plan;
  }
  // Another process's kernel may store into this one's arena after a failure (a peer that gave up later, or not yet).
  // A cuMem arena is safe to free: the physical memory lives until the last mapping of it is unmapped and every
  // handle released (cuMemRelease's reference), so the peer's stores land in memory nobody else gets. Legacy IPC
  // memory has no such promise: freeing it while another process still has it open is undefined behaviour (the
  // cudaIpcOpenMemHandle reference), and a late store could land in another allocation.
  const bool lateStoresPossible = facts.aborted || facts.kernelsGaveUp || !facts.ownWorkFinished;
  if (facts.spansProcesses && facts.legacyIpcArena && lateStoresPossible) {
    plan.release = TeardownRelease::UntilExit;
    plan.reason =
        "its arena is shared by legacy IPC and another process may still store into it (the communicator failed or "
        "was aborted); freeing IPC memory another process still maps is undefined";
    return plan;
  }
  if (!facts.ownWorkFinished) plan.reason = "its own kernels did not finish in time; they were told to stop";
  return plan;
}

bool drainsAnotherRound(bool aborted, bool kernelsGaveUp, int rounds) {
  return !aborted && !kernelsGaveUp && rounds < kHealthyDrainRounds;
}

std::chrono::milliseconds ownWorkBudget(bool aborted, std::uint64_t timeoutNs) {
  if (aborted) return kAbortedDrain;
  return std::chrono::milliseconds(timeoutNs / 1000000u) + kDrainMargin;
}

}  // namespace peerlink::coll
