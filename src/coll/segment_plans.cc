// Cutting calls into segments (segment_plans.hpp).
#include "coll/segment_plans.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "coll/comm_launch_support.hpp"
#include "coll/plan_slots.hpp"
#include "coll/plan_staged.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {

bool holdsRankBlocks(Collective collective, BufferKind buffer) noexcept {
  switch (collective) {
    case Collective::AllGather: return buffer == BufferKind::Output;
    case Collective::ReduceScatter: return buffer == BufferKind::Input;
    case Collective::AllToAll: return buffer == BufferKind::Input || buffer == BufferKind::Output;
    default: return false;
  }
}

std::vector<PlanSegment> planSegments(Collective collective, int nranks, std::size_t count, std::size_t elementSize,
                                      std::size_t capBytes) {
  const bool blocks = holdsRankBlocks(collective, BufferKind::Input) || holdsRankBlocks(collective, BufferKind::Output);
  const std::size_t perElement = elementSize * (blocks ? static_cast<std::size_t>(nranks) : 1);
  const std::size_t align = std::max<std::size_t>(1, 16 / elementSize);
  const std::size_t fit = capBytes / perElement / align * align;
  if (fit == 0) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("plan segments: {} bytes of stage cannot hold 16 bytes of each of "
                                                     "{} blocks",
                                                     capBytes, blocks ? nranks : 1));
  }
  std::vector<PlanSegment> segments;
  std::size_t start = 0;
  do {
    const std::size_t piece = std::min(fit, count - start);
    segments.push_back({start, piece});
    start += piece;
  } while (start < count);
  return segments;
}

namespace {

// The largest scratch or host stage, in bytes, any rank of `plan` uses.
std::size_t stagingBytes(const Plan& plan) {
  std::size_t most = 0;
  for (const RankLayout& rank : plan.ranks) most = std::max({most, rank.scratchElements, rank.hostStageElements});
  return most * dataTypeSize(plan.type);
}

// The plan build(chunk elements) makes, its staging on slots (plan_slots.hpp), the chunk halved from `chunkBytes`
// until every rank's scratch and host stage fit `capBytes`.
template <typename Build>
Plan fitStaging(const Build& build, std::size_t chunkBytes, std::size_t elementSize, std::size_t capBytes) {
  const std::size_t align = std::max<std::size_t>(1, 16 / elementSize);
  for (std::size_t chunk = std::max(chunkBytes / elementSize / align * align, align);;
       chunk = chunk / 2 / align * align) {
    Plan plan = build(chunk);
    if (!reuseStagingSlots(plan) && stagingBytes(plan) > capBytes) {
      throw Error(ErrorCode::Internal, fmt::format("staged plan {}: its staging does not follow the slots' pattern "
                                                   "and needs {} bytes, past the {} there are",
                                                   planName(plan), stagingBytes(plan), capBytes));
    }
    if (stagingBytes(plan) <= capBytes) return plan;
    if (chunk <= align) {
      throw Error(ErrorCode::Internal, fmt::format("staged plan {}: {} bytes of scratch or host stage needed even "
                                                   "with chunks of 16 bytes, past the {} there are",
                                                   planName(plan), stagingBytes(plan), capBytes));
    }
  }
}

}  // namespace

std::vector<StagedSegment> stagedSegments(Collective collective, int nranks, std::size_t count, int root, DataType type,
                                          const RankLinks& links, std::size_t chunkBytes, std::size_t capBytes) {
  const std::size_t size = dataTypeSize(type);
  // planSegments measures a segment by the data its plan would stage without slots: the whole count, or a block per
  // rank. Chunks are cut per shard of all-reduce's count and per block, so those allow n times as much.
  const bool perRank = collective == Collective::AllReduce || holdsRankBlocks(collective, BufferKind::Input) ||
                       holdsRankBlocks(collective, BufferKind::Output);
  const std::size_t wholeCap = kSegmentChunks * chunkBytes * (perRank ? static_cast<std::size_t>(nranks) : 1);
  std::vector<StagedSegment> segments;
  for (const PlanSegment& segment : planSegments(collective, nranks, count, size, std::max(wholeCap, capBytes))) {
    const auto build = [&](std::size_t chunk) {
      return buildStagedPlan(collective, nranks, segment.count, root, false, chunk, type, links);
    };
    segments.push_back({segment, fitStaging(build, chunkBytes, size, capBytes)});
  }
  return segments;
}

std::vector<StagedPiece> stagedPieces(const std::vector<PointToPoint>& pairs, int nranks, DataType type,
                                      const RankLinks& links, std::size_t chunkBytes, std::size_t capBytes) {
  const std::size_t size = dataTypeSize(type);
  std::vector<StagedPiece> pieces;
  for (GroupPiece& piece : groupPieces(pairs, nranks, size, std::max(kSegmentChunks * chunkBytes, capBytes))) {
    const auto build = [&](std::size_t chunk) { return buildStagedSendRecvPlan(piece.pairs, type, chunk, links); };
    Plan plan = fitStaging(build, chunkBytes, size, capBytes);
    pieces.push_back({std::move(piece), std::move(plan)});
  }
  return pieces;
}

std::vector<BufferExtent> segmentExtents(Collective collective, BufferKind buffer, int nranks, std::size_t count,
                                         const PlanSegment& segment, const void* base, std::size_t elementSize) {
  if (!holdsRankBlocks(collective, buffer)) {
    return {BufferExtent{0, segment.count, offsetBy(base, segment.start * elementSize)}};
  }
  std::vector<BufferExtent> extents;
  for (int q = 0; q < nranks; ++q) {
    const std::size_t block = static_cast<std::size_t>(q);
    extents.push_back(
        {block * segment.count, segment.count, offsetBy(base, (block * count + segment.start) * elementSize)});
  }
  return extents;
}

std::vector<GroupPiece> groupPieces(const std::vector<PointToPoint>& pairs, int nranks, std::size_t elementSize,
                                    std::size_t capBytes) {
  std::vector<std::size_t> sends(static_cast<std::size_t>(nranks), 0);
  std::size_t longest = 0;
  for (const PointToPoint& pair : pairs) {
    if (pair.count == 0) continue;
    ++sends[static_cast<std::size_t>(pair.from)];
    longest = std::max(longest, pair.count);
  }
  const std::size_t most = *std::max_element(sends.begin(), sends.end());
  if (most == 0) return {};
  const std::size_t align = std::max<std::size_t>(1, 16 / elementSize);
  const std::size_t step = capBytes / (elementSize * most) / align * align;
  if (step == 0) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("send/recv pieces: {} bytes of stage cannot hold 16 bytes of each "
                                                     "of a rank's {} sends",
                                                     capBytes, most));
  }
  std::vector<GroupPiece> pieces;
  for (std::size_t start = 0; start < longest; start += step) {
    GroupPiece piece;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      if (pairs[i].count <= start) continue;
      piece.pairs.push_back({pairs[i].from, pairs[i].to, std::min(step, pairs[i].count - start)});
      piece.starts.push_back(start);
      piece.of.push_back(i);
    }
    pieces.push_back(std::move(piece));
  }
  return pieces;
}

std::vector<RankExtents> pieceExtents(const GroupPiece& piece, int nranks, const std::vector<const void*>& sendBuffers,
                                      const std::vector<const void*>& recvBuffers, std::size_t elementSize) {
  std::vector<RankExtents> ranks(static_cast<std::size_t>(nranks));
  std::vector<std::size_t> sent(ranks.size(), 0);
  std::vector<std::size_t> received(ranks.size(), 0);
  for (std::size_t k = 0; k < piece.pairs.size(); ++k) {
    const PointToPoint& pair = piece.pairs[k];
    const std::size_t skip = piece.starts[k] * elementSize;
    const auto from = static_cast<std::size_t>(pair.from);
    const auto to = static_cast<std::size_t>(pair.to);
    ranks[from].input.push_back({sent[from], pair.count, offsetBy(sendBuffers[piece.of[k]], skip)});
    ranks[to].output.push_back({received[to], pair.count, offsetBy(recvBuffers[piece.of[k]], skip)});
    sent[from] += pair.count;
    received[to] += pair.count;
  }
  return ranks;
}

}  // namespace peerlink::coll
