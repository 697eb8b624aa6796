// A communicator's end, waiting only for its own work (comm_teardown.hpp).
#include "coll/comm_teardown.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "coll/teardown_plan.hpp"
#include "core/gpu_work.hpp"
#include "core/log.hpp"

namespace peerlink::coll {
namespace {

// What is left of a communicator: destroying it frees its buffers (its state first, then the word its kernels read).
struct Remains {
  Remains(CommState&& comm, PinnedBuffer&& word) : abortWord(std::move(word)), state(std::move(comm)) {}
  PinnedBuffer abortWord;
  CommState state;
};

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    cudaGetLastError();
    return true;  // the legacy stream while another stream captures: nothing was launched on it either
  }
  return status != cudaStreamCaptureStatusNone;
}

void logLaunchCounts(const CommState& state) {
  if (state.launchThreads != nullptr) {
    const LaunchThreads::Stats& stats = state.launchThreads->stats();
    logInfo(LogSubsys::Coll,
            "launch threads: {} eager sets, {} launches by the threads, {} taken back from a thread that had not "
            "started them in {} us, longest wait for a thread {:.1f} us",
            stats.sets, stats.handedOver, stats.takenBack, LaunchThreads::kTakeBackAfter.count(),
            std::chrono::duration<double, std::micro>(stats.longestWait).count());
  }
  std::uint64_t graphLaunches = 0;
  std::uint64_t graphUpdates = 0;
  for (const RankResources& rank : state.ranks) {
    if (rank.eagerGraph == nullptr) continue;
    graphLaunches += rank.eagerGraph->launches();
    graphUpdates += rank.eagerGraph->updates();
  }
  logInfo(LogSubsys::Coll, "eager launches through the kept graphs: {}, {} of them re-aimed at new arguments",
          graphLaunches, graphUpdates);
  if (state.shared.calls + state.shared.late > 0) {
    logInfo(LogSubsys::Coll,
            "shared calls: {} on the ranks' own buffers, {} staged because a rank came later than sharing would save",
            state.shared.calls, state.shared.late);
  }
  if (state.stagedGraphs != nullptr) {
    logInfo(LogSubsys::Coll, "staged calls: {} captured into graphs, {} replayed from them{}",
            state.stagedGraphs->captures, state.stagedGraphs->replays,
            state.stagedGraphs->off ? " (then off: a capture failed)" : "");
  }
}

// The device and pinned memory the communicator holds, for the log.
std::size_t heldBytes(const CommState& state) {
  std::size_t bytes = state.failures.size();
  for (const int r : state.localRanks()) {
    const RankResources& rank = state.ranks[static_cast<std::size_t>(r)];
    bytes += state.layout.bytes + rank.sync.size();
  }
  if (state.planned) {
    for (const DeviceBuffer& buffer : state.planned->scratch) bytes += buffer.size();
    for (const DeviceBuffer& buffer : state.planned->counters) bytes += buffer.size();
    for (const PinnedBuffer& buffer : state.planned->pinned) bytes += buffer.size();
  }
  return bytes;
}

TeardownFacts factsOf(const CommState& state, bool aborted) {
  TeardownFacts facts;
  facts.aborted = aborted;
  facts.spansProcesses = state.world.spansProcesses;
  for (const int r : state.localRanks()) {
    const RankArena& arena = state.ranks[static_cast<std::size_t>(r)].arena;
    if (arena.shared && arena.shared->kind() == ShareKind::Ipc) facts.legacyIpcArena = true;
    if (state.failures.data() != nullptr) {
      const volatile unsigned long long* launch = &state.failure(r)->launch;
      if (*launch != 0) facts.kernelsGaveUp = true;
    }
  }
  facts.ownWorkTracked = state.work == nullptr || state.work->tracksAll();
  return facts;
}

// The abort word through the state's pointer to it (the watchdogs raise it too; a store of one word needs no lock).
bool raised(const CommState& state) {
  return state.abortWord != nullptr && *static_cast<const volatile unsigned int*>(state.abortWord) != 0;
}
void raise(const CommState& state) {
  if (state.abortWord != nullptr) *static_cast<volatile unsigned int*>(state.abortWord) = 1;
}

}  // namespace

LaunchTracking::LaunchTracking(CommState& state, const std::vector<CallArgs>& calls, std::optional<bool> capturing)
    : state_(state), calls_(calls), capturing_(capturing) {
  state_.launchOnCaller = std::any_of(calls_.begin(), calls_.end(), [&](const CallArgs& call) {
    return state_.world.isLocal(call.rank) && call.stream == cudaStreamPerThread;
  });
}

LaunchTracking::~LaunchTracking() {
  state_.launchOnCaller = false;
  if (state_.work == nullptr || capturing_.value_or(false)) return;
  for (std::size_t i = 0; i < calls_.size(); ++i) {
    const CallArgs& call = calls_[i];
    if (!state_.world.isLocal(call.rank)) continue;
    // A group's calls of one rank on one stream: one event behind them all.
    const bool seen = std::any_of(
        calls_.begin(), calls_.begin() + static_cast<std::ptrdiff_t>(i),
        [&](const CallArgs& earlier) { return earlier.rank == call.rank && earlier.stream == call.stream; });
    if (seen) continue;
    try {
      const int device = state_.devices[static_cast<std::size_t>(call.rank)];
      if (!capturing_.has_value()) {
        const DeviceGuard guard(device);  // the legacy stream is the current device's
        if (capturing(call.stream)) continue;
      }
      state_.work->recordAfter(device, call.stream);
    } catch (const std::exception& error) {
      // A stream whose capture was invalidated (its launches failed with it) has nothing queued to wait for.
      bool captured = false;
      try {
        const DeviceGuard guard(state_.devices[static_cast<std::size_t>(call.rank)]);
        captured = capturing(call.stream);
      } catch (...) {  // the device cannot be made current: count the launch as lost
      }
      if (captured) continue;
      state_.work->lostTrack();
      try {
        logWarn(LogSubsys::Coll,
                "rank {}'s launch could not be tracked ({}): its communicator's buffers will be kept "
                "until the process exits",
                call.rank, error.what());
      } catch (...) {  // no memory for the line: the communicator still knows
      }
    }
  }
}

void retireCommunicator(CommState& state, PinnedBuffer& abortWord, std::mutex& abortWordMutex) noexcept {
  try {
    logLaunchCounts(state);
  } catch (...) {  // out of memory for the lines: nothing to report it to
  }
  state.launchThreads.reset();  // idle: no call is under way while the communicator ends
  const auto start = WorkClock::now();
  try {
    bool finished =
        state.work == nullptr || state.work->waitFinished(start + ownWorkBudget(raised(state), state.timeoutNs));
    for (int rounds = 1; !finished && drainsAnotherRound(raised(state), factsOf(state, false).kernelsGaveUp, rounds);
         ++rounds) {
      finished = state.work->waitFinished(WorkClock::now() + ownWorkBudget(false, state.timeoutNs));
    }
    // After the wait: a watchdog may have raised the word meanwhile, and kernels that gave up have said so.
    const bool aborted = raised(state);
    TeardownFacts facts = factsOf(state, aborted);
    facts.ownWorkFinished = finished;
    const TeardownPlan plan = planTeardown(facts);
    if (plan.raiseAbortWord) {
      raise(state);
      // Kernels queued behind other work leave at their first wait once they run.
      state.work->waitFinished(WorkClock::now() + kAbortedDrain);
    }
    const std::size_t unfinished = state.work == nullptr ? 0 : state.work->unfinishedStreams();
    std::vector<int> devices;
    for (const int r : state.localRanks()) devices.push_back(state.devices[static_cast<std::size_t>(r)]);
    std::string what = fmt::format("the communicator of {} ranks (ranks {} here, on GPUs {})", state.nranks,
                                   fmt::join(state.localRanks(), ","), fmt::join(devices, ","));
    logInfo(LogSubsys::Coll, "{} ends{}: its own work {} after {:.1f} ms", what, aborted ? " (aborted)" : "",
            unfinished == 0 ? "finished" : fmt::format("unfinished on {} stream(s)", unfinished),
            std::chrono::duration<double, std::milli>(WorkClock::now() - start).count());
    HeldResources resources;
    resources.bytes = heldBytes(state);
    resources.what = std::move(what);
    {
      const std::lock_guard<std::mutex> lock(abortWordMutex);
      resources.held = std::make_shared<Remains>(std::move(state), std::move(abortWord));
    }
    if (plan.release == TeardownRelease::UntilExit) {
      holdUntilExit(std::move(resources), plan.reason);
    } else {
      releaseWhenIdle(std::move(resources), WorkClock::now() + kIdleWait, plan.reason);
    }
  } catch (...) {
    // No memory to decide or to hold: what was not moved out is freed by the caller's destructors, which may wait for
    // the device as they always could.
  }
}

}  // namespace peerlink::coll
