// The copies and reductions between a piece's pinned slot and the caller's memory (net_call.hpp: copiesIntoSlot,
// copiesOutOfSlot, reductionsOutOfSlot, outputIsLocalCopies), and the order a queued call's device side makes them in
// (queuedDeviceOps). Pure.
#include <algorithm>
#include <string>
#include <vector>

#include "net/net_call.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {

std::vector<SlotCopy> copiesIntoSlot(const CallPiece& piece, const StagingSlots::Slot& slot, std::size_t elementSize) {
  std::vector<SlotCopy> copies;
  for (const BufferMap::Segment& segment : piece.input.segments) {
    if (segment.elements > 0) {
      copies.push_back({slot.input + segment.begin * elementSize, segment.data, segment.elements * elementSize});
    }
  }
  return copies;
}

namespace {

// An output range the slot's output does not fill: a local copy (from the slot's input), or a deferred reduction
// (reductionsOutOfSlot's: no copy).
struct CoveredOutput {
  std::size_t output = 0;
  std::size_t count = 0;
  const LocalCopy* copy = nullptr;
};

std::vector<CoveredOutput> coveredOutputs(const CallPiece& piece) {
  std::vector<CoveredOutput> covered;
  for (const LocalCopy& copy : piece.atCopyOut) covered.push_back({copy.output, copy.count, &copy});
  for (const DeferredReduction& reduction : piece.reducedAtCopyOut) {
    covered.push_back({reduction.output, reduction.count, nullptr});
  }
  std::sort(covered.begin(), covered.end(),
            [](const CoveredOutput& a, const CoveredOutput& b) { return a.output < b.output; });
  return covered;
}

Error noOneSegment(const CallPiece& piece, const char* what, std::size_t begin, std::size_t count) {
  return Error(ErrorCode::Internal, std::string("net ") + collectiveName(piece.plan.collective) + ": " + what +
                                        " elements [" + std::to_string(begin) + ", " + std::to_string(begin + count) +
                                        ") lies in no one segment of the piece");
}

// The caller's address of `count` elements of `map` from element `begin`, which lie in one segment; null otherwise.
std::byte* callerAddress(const BufferMap& map, std::size_t begin, std::size_t count, std::size_t elementSize) {
  for (const BufferMap::Segment& segment : map.segments) {
    if (begin >= segment.begin && begin + count <= segment.begin + segment.elements) {
      return static_cast<std::byte*>(segment.data) + (begin - segment.begin) * elementSize;
    }
  }
  return nullptr;
}

}  // namespace

// Each local copy and deferred reduction lies in one output segment; the output slot fills the segment around them.
std::vector<SlotCopy> copiesOutOfSlot(const CallPiece& piece, const StagingSlots::Slot& slot, std::size_t elementSize) {
  std::vector<SlotCopy> copies;
  const auto add = [&](void* dst, const void* src, std::size_t elements) {
    if (elements > 0) copies.push_back({dst, src, elements * elementSize});
  };
  const std::vector<CoveredOutput> covered = coveredOutputs(piece);
  auto next = covered.begin();
  for (const BufferMap::Segment& segment : piece.output.segments) {
    auto* caller = static_cast<std::byte*>(segment.data);
    std::size_t at = segment.begin;
    const std::size_t end = segment.begin + segment.elements;
    for (; next != covered.end() && next->output < end; ++next) {
      if (next->output < at || next->output + next->count > end) {
        throw noOneSegment(piece, next->copy != nullptr ? "a local copy to output" : "a deferred reduction to output",
                           next->output, next->count);
      }
      add(caller + (at - segment.begin) * elementSize, slot.output + at * elementSize, next->output - at);
      if (next->copy != nullptr) {
        add(caller + (next->output - segment.begin) * elementSize, slot.input + next->copy->input * elementSize,
            next->count);
      }
      at = next->output + next->count;
    }
    add(caller + (at - segment.begin) * elementSize, slot.output + at * elementSize, end - at);
  }
  return copies;
}

std::vector<SlotReduction> reductionsOutOfSlot(const CallPiece& piece, const StagingSlots::Slot& slot,
                                               std::size_t elementSize) {
  std::vector<SlotReduction> reductions;
  for (const DeferredReduction& deferred : piece.reducedAtCopyOut) {
    SlotReduction reduction;
    reduction.count = deferred.count;
    reduction.dst = callerAddress(piece.output, deferred.output, deferred.count, elementSize);
    if (reduction.dst == nullptr) {
      throw noOneSegment(piece, "a deferred reduction to output", deferred.output, deferred.count);
    }
    for (const coll::BufferRef& src : deferred.sources) {
      // The rank's own input is read where the caller keeps it (device memory, nearer than the slot's copy of it).
      const void* at = src.buffer == coll::BufferKind::Input
                           ? callerAddress(piece.input, src.offset, deferred.count, elementSize)
                           : slot.scratch + src.offset * elementSize;
      if (at == nullptr || (src.buffer != coll::BufferKind::Input && src.buffer != coll::BufferKind::Scratch)) {
        throw noOneSegment(piece, "a deferred reduction's source", src.offset, deferred.count);
      }
      reduction.srcs.push_back(at);
    }
    reductions.push_back(std::move(reduction));
  }
  return reductions;
}

bool outputIsLocalCopies(const CallPiece& piece) {
  std::size_t copied = 0;
  for (const LocalCopy& copy : piece.atCopyOut) copied += copy.count;
  return copied == piece.outputElements;
}

std::vector<QueuedDeviceOp> queuedDeviceOps(const std::vector<std::vector<SlotCopy>>& copiesIn,
                                            const std::vector<std::vector<SlotCopy>>& copiesOut,
                                            const std::vector<std::uint64_t>& tickets, std::size_t slots,
                                            const std::vector<TicketRange>& computations,
                                            const std::vector<std::vector<SlotReduction>>& reductionsOut, int divisor) {
  using Kind = QueuedDeviceOp::Kind;
  std::vector<QueuedDeviceOp> ops;
  const std::size_t pieces = tickets.size();
  if (pieces == 0 || slots == 0 || copiesIn.size() != pieces || copiesOut.size() != pieces ||
      (!computations.empty() && computations.size() != pieces) ||
      (!reductionsOut.empty() && reductionsOut.size() != pieces)) {
    throw Error(ErrorCode::Internal, "queuedDeviceOps: " + std::to_string(pieces) + " pieces, " +
                                         std::to_string(copiesIn.size()) + " and " + std::to_string(copiesOut.size()) +
                                         " lists of copies, " + std::to_string(computations.size()) +
                                         " of computations, " + std::to_string(reductionsOut.size()) +
                                         " of reductions, " + std::to_string(slots) + " slots");
  }
  const auto op = [](Kind kind, SlotCopy copy, std::uint64_t ticket) {
    QueuedDeviceOp made;
    made.kind = kind;
    made.copy = copy;
    made.ticket = ticket;
    return made;
  };
  const auto out = [&](std::size_t p) {
    if (!computations.empty()) {
      for (std::size_t c = 0; c < computations[p].count; ++c) {
        ops.push_back(op(Kind::Compute, {}, computations[p].first + c));
      }
    }
    ops.push_back(op(Kind::AwaitReady, {}, tickets[p]));
    for (const SlotCopy& copy : copiesOut[p]) ops.push_back(op(Kind::Copy, copy, 0));
    if (!reductionsOut.empty()) {
      for (const SlotReduction& reduction : reductionsOut[p]) {
        QueuedDeviceOp reduce = op(Kind::Reduce, {}, 0);
        reduce.reduction = reduction;
        reduce.divisor = divisor;
        ops.push_back(std::move(reduce));
      }
    }
  };
  for (std::size_t p = 0; p < pieces; ++p) {
    if (p >= slots) out(p - slots);
    for (const SlotCopy& copy : copiesIn[p]) ops.push_back(op(Kind::Copy, copy, 0));
    ops.push_back(op(Kind::Copied, {}, tickets[p]));
  }
  for (std::size_t p = pieces > slots ? pieces - slots : 0; p < pieces; ++p) out(p);
  return ops;
}

}  // namespace peerlink::net
