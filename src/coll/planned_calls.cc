// What a call of a communicator with staged plans runs (planned_calls.hpp).
#include "coll/planned_calls.hpp"

#include <utility>
#include <vector>

#include "coll/comm_state.hpp"
#include "coll/host_ring_call.hpp"
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

StagedCallShape stagedCallShape(Collective collective, std::size_t count, DataType type, const RankLinks& links,
                                std::size_t chunkBytes, std::size_t hostRingMaxBytes) {
  StagedCallShape shape;
  if (plannedLineBytes(collective, count, type) > 0) {
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
