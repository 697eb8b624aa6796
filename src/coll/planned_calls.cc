// What a call of a communicator with staged plans runs (planned_calls.hpp).
#include "coll/planned_calls.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "coll/comm_state.hpp"
#include "coll/host_ring_call.hpp"
#include "coll/plan_program.hpp"
#include "coll/plan_staged.hpp"
#include "coll/segment_plans.hpp"

namespace peerlink::coll {

std::size_t stagedChunkBytes(const Params& params) {
  const auto chosen = static_cast<std::size_t>(params.getInt("PEERLINK_COLL_STAGED_CHUNK"));
  return chosen == 0 ? kPlanChunkBytes : chosen;
}

std::size_t plannedLineBytes(Collective collective, std::size_t count, DataType type) {
  const std::size_t bytes = count * dataTypeSize(type);
  return collective != Collective::SendRecv && bytes > 0 && bytes <= kPlanLlMaxBytes ? bytes : 0;
}

PairLines plannedPairLines(const std::vector<PairMessage>& messages, int nranks) {
  PairLines lines;
  if (messages.empty() || nranks < 1 || nranks > 31) return lines;  // ranks as bits of a mask
  const std::size_t bytes = messages.front().bytes;
  if (bytes == 0 || bytes > kPlanLlMaxBytes || !everyRankTakesPart(messages, nranks)) return lines;
  const auto n = static_cast<std::size_t>(nranks);
  lines.ranks.assign(n, PairLines::Rank{std::vector<const void*>(n, nullptr), std::vector<void*>(n, nullptr), 0});
  std::vector<unsigned int> heard(n, 0);  // by receiver: the ranks whose message it takes
  for (const PairMessage& message : messages) {
    if (message.bytes != bytes || message.from < 0 || message.to < 0 || message.from >= nranks ||
        message.to >= nranks) {
      return {};
    }
    const unsigned int sender = 1u << message.from;
    unsigned int& fromWhom = heard[static_cast<std::size_t>(message.to)];
    if ((fromWhom & sender) != 0) return {};  // two messages of one pair would need two slots
    fromWhom |= sender;
    lines.ranks[static_cast<std::size_t>(message.from)].to[static_cast<std::size_t>(message.to)] = message.src;
    lines.ranks[static_cast<std::size_t>(message.to)].from[static_cast<std::size_t>(message.from)] = message.dst;
  }
  const unsigned int everyRank = (1u << nranks) - 1;
  for (std::size_t r = 0; r < n; ++r) lines.ranks[r].tokens = everyRank & ~heard[r] & ~(1u << r);
  lines.bytes = bytes;
  return lines;
}

PairLines exchangePairLines(const std::vector<ExchangeSide>& calls, int rank, int nranks, const void* send,
                            void* recv) {
  if (!isTwoRankExchange(calls, rank, nranks)) return {};
  const int other = 1 - rank;
  const ExchangeSide message = withOtherRanks(calls, rank).front();
  const std::size_t bytes = message.count * dataTypeSize(message.type);
  return plannedPairLines({{rank, other, send, nullptr, bytes}, {other, rank, nullptr, recv, bytes}}, nranks);
}

bool everyRankTakesPart(const std::vector<PairMessage>& messages, int nranks) {
  std::vector<bool> takesPart(static_cast<std::size_t>(std::max(nranks, 0)), false);
  const auto mark = [&](int rank) {
    if (rank >= 0 && rank < nranks) takesPart[static_cast<std::size_t>(rank)] = true;
  };
  for (const PairMessage& message : messages) {
    mark(message.from);
    mark(message.to);
  }
  return std::find(takesPart.begin(), takesPart.end(), false) == takesPart.end();
}

std::size_t ringShiftLineBytes(std::size_t count, DataType type, int nranks) {
  std::vector<PairMessage> shift;  // no buffers: only the shape is judged
  for (int r = 0; r < nranks; ++r)
    shift.push_back({(r + nranks - 1) % nranks, r, nullptr, nullptr, count * dataTypeSize(type)});
  return plannedPairLines(shift, nranks).bytes;
}

bool runsInLines(Collective collective, std::size_t count, DataType type, int nranks) {
  if (collective == Collective::SendRecv) return ringShiftLineBytes(count, type, nranks) > 0;
  return plannedLineBytes(collective, count, type) > 0;
}

const char* stagedWayName(StagedWay way) noexcept {
  switch (way) {
    case StagedWay::Lines: return "host_lines";
    case StagedWay::Ring: return "host_ring";
    case StagedWay::Chain: return "host_chain";
    case StagedWay::PlanKernel: return "plan_kernel";
    case StagedWay::PlanSteps: return "plan_steps";
    case StagedWay::PairByPair: return "pair_by_pair";
  }
  return "";
}

StagedWay stagedWayOf(Collective collective, std::size_t count, DataType type, int nranks, std::size_t hostRingMaxBytes,
                      bool oneKernel, bool acrossProcesses) {
  const bool shift = collective == Collective::SendRecv;
  if (shift && acrossProcesses && nranks != 2) return StagedWay::PairByPair;
  if (runsInLines(collective, count, type, nranks)) return StagedWay::Lines;
  if (runsAsHostRing(collective, count, type, nranks, hostRingMaxBytes)) {
    return collective == Collective::Broadcast || collective == Collective::Reduce ? StagedWay::Chain : StagedWay::Ring;
  }
  if (shift && acrossProcesses) return StagedWay::PairByPair;
  // A send/recv group's size is what one rank sends at most: the ring shift's count.
  return runsAsOneKernel(count * dataTypeSize(type), oneKernel) ? StagedWay::PlanKernel : StagedWay::PlanSteps;
}

StagedCallShape stagedCallShape(Collective collective, std::size_t count, DataType type, const RankLinks& links,
                                std::size_t chunkBytes, std::size_t hostRingMaxBytes) {
  StagedCallShape shape;
  if (runsInLines(collective, count, type, links.nranks)) {
    shape.lines = true;
    return shape;
  }
  if (runsAsHostRing(collective, count, type, links.nranks, hostRingMaxBytes)) {
    shape.hostRing = true;
    return shape;
  }
  std::vector<Plan> plans;
  if (collective == Collective::SendRecv) {
    std::vector<PointToPoint> ring;
    for (int r = 0; r < links.nranks; ++r) ring.push_back({(r + links.nranks - 1) % links.nranks, r, count});
    for (StagedPiece& piece : stagedPieces(ring, links.nranks, type, links, chunkBytes, kPlanStageBytes)) {
      plans.push_back(std::move(piece.plan));
    }
  } else {
    for (StagedSegment& segment :
         stagedSegments(collective, links.nranks, count, 0, type, links, chunkBytes, kPlanStageBytes)) {
      plans.push_back(std::move(segment.plan));
    }
  }
  shape.segments = plans.size();
  for (const Plan& plan : plans) shape.steps += plan.steps.size();
  if (!plans.empty()) {
    shape.chunks = plans.front().chunks;
    shape.chunkBytes = plans.front().chunkElements * dataTypeSize(type);
  }
  return shape;
}

}  // namespace peerlink::coll
