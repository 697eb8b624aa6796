// A staged call's time from its schedule (staged_time.hpp).
#include "plan/staged_time.hpp"

#include <array>
#include <cstdint>

#include "coll/staging_schedule.hpp"

namespace peerlink::plan {
namespace {

using coll::StagingOp;

constexpr std::size_t kNone = SIZE_MAX;

// Where a lane or an event stands: its time, and the last operation that took time on the way there.
struct Mark {
  double timeUs = 0;
  std::size_t last = kNone;  // an index into the operations done
};

// An operation that took time, and the one whose end it started at.
struct Done {
  StagingOp op;
  std::size_t before = kNone;
};

std::optional<double> durationOf(const StagingOp& op, const StagedDurations& durations) {
  switch (op.kind) {
    case StagingOp::Kind::CopyIn: return durations.copyIn[op.chunk];
    case StagingOp::Kind::Kernel: return durations.kernel[op.chunk];
    case StagingOp::Kind::CopyOut: return durations.copyOut[op.chunk];
    case StagingOp::Kind::Record:
    case StagingOp::Kind::Wait: break;
  }
  return std::nullopt;
}

}  // namespace

StagedTime stagedTime(const StagedDurations& durations, bool pipelined) {
  const std::size_t chunks = durations.kernel.size();
  std::array<Mark, 2> lanes{};  // the caller's stream, the copy stream
  std::array<Mark, coll::kStagingEvents> events{};
  std::vector<Done> done;
  for (const StagingOp& op : coll::stagingSchedule(chunks, pipelined)) {
    Mark& lane = lanes[op.lane == coll::StagingLane::Caller ? 0 : 1];
    Mark& event = events[static_cast<std::size_t>(op.event)];
    if (op.kind == StagingOp::Kind::Record) {
      event = lane;
    } else if (op.kind == StagingOp::Kind::Wait) {
      if (event.timeUs > lane.timeUs) lane = event;
    } else if (const std::optional<double> took = durationOf(op, durations)) {
      done.push_back({op, lane.last});
      lane = {lane.timeUs + *took, done.size() - 1};
    }
  }
  StagedTime time;
  time.timeUs = lanes[0].timeUs;
  time.copyInOnPath.assign(chunks, false);
  time.kernelOnPath.assign(chunks, false);
  time.copyOutOnPath.assign(chunks, false);
  for (std::size_t i = lanes[0].last; i != kNone; i = done[i].before) {
    const StagingOp& op = done[i].op;
    std::vector<bool>& onPath = op.kind == StagingOp::Kind::CopyIn   ? time.copyInOnPath
                                : op.kind == StagingOp::Kind::Kernel ? time.kernelOnPath
                                                                     : time.copyOutOnPath;
    onPath[op.chunk] = true;
  }
  return time;
}

}  // namespace peerlink::plan
