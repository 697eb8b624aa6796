// Stalls reported by the collective kernels (comm_health.hpp).
#include "coll/comm_health.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// A copy of the record through volatile reads: the device may be writing it.
kernels::CollFailure readRecord(const kernels::CollFailure* failure) {
  const volatile kernels::CollFailure* f = failure;
  kernels::CollFailure copy{};
  copy.launch = f->launch;
  copy.seq = f->seq;
  copy.observed = f->observed;
  copy.expected = f->expected;
  copy.timeNs = f->timeNs;
  copy.status = f->status;
  copy.step = f->step;
  copy.peer = f->peer;
  copy.block = f->block;
  copy.collective = f->collective;
  return copy;
}

// "rank 2 (GPU 2)" for a rank of this process, "rank 2 (pid 123, GPU 0000:00:08.0)" for another's.
std::string rankLabel(const CommState& state, int rank) {
  if (state.world.isLocal(rank))
    return fmt::format("rank {} (GPU {})", rank, state.devices[static_cast<std::size_t>(rank)]);
  const RankCard& card = state.world.cards[static_cast<std::size_t>(rank)];
  return fmt::format("rank {} (pid {}, GPU {})", rank, card.pid, card.busId);
}

const char* collectiveOf(int collective) {
  if (collective < 0 || collective > static_cast<int>(Collective::SendRecv)) return "collective";
  return collectiveName(static_cast<Collective>(collective));
}

}  // namespace

Error stallError(const CommState& state, std::vector<StallReport> reports) {
  std::sort(reports.begin(), reports.end(),
            [](const StallReport& a, const StallReport& b) { return a.record.timeNs < b.record.timeNs; });
  // A record of an aborted communicator (a lost peer, the application's abort) is no deadline passing.
  const bool abortedAll = std::all_of(reports.begin(), reports.end(), [](const StallReport& report) {
    return report.record.status == PEERLINK_STATUS_REMOTE_ERROR;
  });
  std::string message =
      abortedAll
          ? std::string(
                "collective kernels gave up waiting: the communicator was aborted (a lost peer or "
                "abort()): ")
          : "collective kernels gave up waiting (PEERLINK_TIMEOUT_MS=" + std::to_string(state.timeoutNs / 1000000u) +
                "): ";
  // A staged plan's ranks that called differently (plan_barrier.cuh's call check): the caller's error, named as such.
  const auto mismatch = std::find_if(reports.begin(), reports.end(), [](const StallReport& report) {
    return report.record.step == kernels::kStepPlanCallMismatch;
  });
  if (mismatch != reports.end()) {
    const int peer = mismatch->record.peer >= 0 && mismatch->record.peer < state.nranks ? mismatch->record.peer : -1;
    return Error(
        ErrorCode::InvalidUsage,
        fmt::format("{} #{}: {} and {} made different calls (collective, count, type, op or root differ); "
                    "every rank must make the same call in the same order",
                    collectiveOf(mismatch->record.collective), mismatch->record.seq, rankLabel(state, mismatch->rank),
                    peer >= 0 ? rankLabel(state, peer) : fmt::format("rank {}", mismatch->record.peer)));
  }
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const StallReport& report = reports[i];
    const kernels::CollFailure& f = report.record;
    const int peer = f.peer >= 0 && f.peer < state.nranks ? f.peer : -1;
    message += fmt::format("{}{} #{} on {} waited for {} at the {} (block {}, flag {} observed, {} expected)",
                           i == 0 ? "" : "; then ", collectiveOf(f.collective), f.seq, rankLabel(state, report.rank),
                           peer >= 0 ? rankLabel(state, peer) : fmt::format("rank {}", f.peer),
                           kernels::collStepName(f.step), f.block, f.observed, f.expected);
  }
  message += reports.size() > 1 ? " (earliest first: the first names the likely straggler)" : "";
  // A ring's rank waits for its neighbours only: one stalled rank stalls its neighbour's, whose wait then names the
  // neighbour, not the stalled rank.
  const bool inRing = std::any_of(reports.begin(), reports.end(), [](const StallReport& report) {
    const int step = report.record.step;
    return step == kernels::kStepHostRing || step == kernels::kStepArenaRing || step == kernels::kStepRingData ||
           step == kernels::kStepRingFree;
  });
  message += inRing && !abortedAll
                 ? "; in a ring a rank waits for its neighbours only, so the rank named may itself be waiting for "
                   "another: the ranks' reports together point at the one that stalled"
                 : "";
  return Error(abortedAll ? ErrorCode::RemoteError : ErrorCode::Timeout, message);
}

namespace {

// throwIfFailed's work, `state.health` held.
void throwNewFailure(CommState& state) {
  std::vector<StallReport> reports;
  for (const int r : state.localRanks()) {
    const auto index = static_cast<std::size_t>(r);
    const volatile unsigned long long* launch = &state.failure(r)->launch;
    if (*launch <= state.reported[index]) continue;
    StallReport report;
    report.rank = r;
    report.record = readRecord(state.failure(r));
    state.reported[index] = report.record.launch;
    reports.push_back(report);
  }
  if (reports.empty()) return;
  throw stallError(state, std::move(reports));
}

}  // namespace

void throwIfFailed(CommState& state) {
  const std::lock_guard<std::mutex> lock(*state.health);
  try {
    throwNewFailure(state);
  } catch (const Error& error) {
    state.lastFailure = error;
    throw;
  }
}

std::optional<Error> lastFailure(CommState& state) {
  const std::lock_guard<std::mutex> lock(*state.health);
  try {
    throwNewFailure(state);
  } catch (const Error& error) {
    state.lastFailure = error;
  }
  return state.lastFailure;
}

}  // namespace peerlink::coll
