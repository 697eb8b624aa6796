// A staged call's stream operations (staging_schedule.hpp).
#include "coll/staging_schedule.hpp"

namespace peerlink::coll {
namespace {

StagingOp record(StagingLane lane, StagingEvent event) {
  return {StagingOp::Kind::Record, lane, event, 0};
}
StagingOp wait(StagingLane lane, StagingEvent event) {
  return {StagingOp::Kind::Wait, lane, event, 0};
}
StagingOp copyIn(StagingLane lane, std::size_t chunk) {
  return {StagingOp::Kind::CopyIn, lane, StagingEvent::Forked, chunk};
}
StagingOp kernel(std::size_t chunk) {
  return {StagingOp::Kind::Kernel, StagingLane::Caller, StagingEvent::Forked, chunk};
}
StagingOp copyOut(StagingLane lane, std::size_t chunk) {
  return {StagingOp::Kind::CopyOut, lane, StagingEvent::Forked, chunk};
}

// The event chunk k's kernel records: one per half, as the copy stream waits for chunk k-1's kernel after the
// caller's stream has queued chunk k's.
StagingEvent kernelDone(std::size_t chunk) {
  return chunk % 2 == 0 ? StagingEvent::KernelDoneEven : StagingEvent::KernelDoneOdd;
}

}  // namespace

std::vector<StagingOp> stagingSchedule(std::size_t chunks, bool pipelined) {
  std::vector<StagingOp> ops;
  if (!pipelined || chunks < 2) {
    for (std::size_t k = 0; k < chunks; ++k) {
      ops.push_back(copyIn(StagingLane::Caller, k));
      ops.push_back(kernel(k));
      ops.push_back(copyOut(StagingLane::Caller, k));
    }
    return ops;
  }
  constexpr StagingLane kCopies = StagingLane::Copies;
  ops.push_back(record(StagingLane::Caller, StagingEvent::Forked));
  ops.push_back(wait(kCopies, StagingEvent::Forked));
  ops.push_back(copyIn(kCopies, 0));
  ops.push_back(record(kCopies, StagingEvent::CopiedIn));
  for (std::size_t k = 0; k < chunks; ++k) {
    ops.push_back(wait(StagingLane::Caller, StagingEvent::CopiedIn));
    ops.push_back(kernel(k));
    ops.push_back(record(StagingLane::Caller, kernelDone(k)));
    // Meanwhile, in the other half: chunk k-1's result out, then chunk k+1's input in.
    if (k >= 1) {
      ops.push_back(wait(kCopies, kernelDone(k - 1)));
      ops.push_back(copyOut(kCopies, k - 1));
    }
    if (k + 1 < chunks) {
      ops.push_back(copyIn(kCopies, k + 1));
      ops.push_back(record(kCopies, StagingEvent::CopiedIn));
    }
  }
  ops.push_back(wait(kCopies, kernelDone(chunks - 1)));
  ops.push_back(copyOut(kCopies, chunks - 1));
  ops.push_back(record(kCopies, StagingEvent::Joined));
  ops.push_back(wait(StagingLane::Caller, StagingEvent::Joined));
  return ops;
}

std::vector<StagingOp> stagingAbandon(const std::vector<StagingOp>& schedule, std::size_t issued) {
  bool forked = false;
  for (std::size_t i = 0; i < issued && i < schedule.size(); ++i) {
    const StagingOp& op = schedule[i];
    if (op.kind == StagingOp::Kind::Record && op.event == StagingEvent::Forked) forked = true;
    if (op.kind == StagingOp::Kind::Wait && op.event == StagingEvent::Joined) forked = false;
  }
  if (!forked) return {};
  return {record(StagingLane::Copies, StagingEvent::Joined), wait(StagingLane::Caller, StagingEvent::Joined)};
}

WindowAccess windowAccessOf(Kernel kernel) {
  switch (kernel) {
    // Stores into the peers' LL lines; reads its own window's send region, writes its own recv region.
    case Kernel::LlOneShot:
    case Kernel::Ll128OneShot:
    case Kernel::LlPairs:
    // Chains through the next rank's ring stage (coll_ring_reduce.cu); the chain's last rank combines into its
    // own output. The stage's credits across calls concern the stage only.
    case Kernel::RingReduce:
    case Kernel::RingReduceScatter: return WindowAccess::OwnOnly;
    // coll_reduce.cu and coll_copy.cu: every block meets block b of every peer at a start barrier before any
    // access to a peer and at an end barrier after (releasing its stores where it stored into peers).
    case Kernel::OneShotReduce:
    case Kernel::TwoShot:
    case Kernel::ShardReduce:
    case Kernel::Copy:
    // Two kernels of the above (the reduce-scatter, then the copy).
    case Kernel::SplitTwoShot:
    // coll_push_phased.cu: a start barrier before storing into the owners' push stages; the all-reduce stores the
    // result into every peer's output and ends with a barrier; the reduce-scatter's owner reduces into its own
    // output only (no peer touches its window).
    case Kernel::PushReduce:
    // coll_ring_broadcast.cu: a rank stores into the next rank's output only once that rank has started
    // (neighborStart), and a rank's kernel ends only after the flag of every round stored into it (no end
    // barrier, but nothing lands after it); no rank reads a peer's window.
    case Kernel::RingBroadcast:
    // The ring reduces (own output), then the ring broadcasts above.
    case Kernel::RingAllReduce:
    // comm_launch_copy_engine.cc: the copy engines push into the peers' outputs after a barrier kernel (CeCopy) or
    // after a reduce kernel whose start barrier or chain every peer's kernel of the call joined (CeTwoShot,
    // CeRingAllReduce), and a closing barrier kernel meets every rank once its pushes have landed.
    case Kernel::CeCopy:
    case Kernel::CeTwoShot:
    case Kernel::CeRingAllReduce: return WindowAccess::WhileOwnerRuns;
  }
  return WindowAccess::WhileOwnerRuns;
}

}  // namespace peerlink::coll
