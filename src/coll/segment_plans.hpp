// Large calls on the staged plans (plan_staged.hpp) in segments: a plan's scratch and host stages hold its whole
// data until its slots are reused (plan_slots.hpp), so a call is cut into segments whose plans, slots reused, fit the
// buffers the communicator keeps, each run over the part of the user's buffers it covers. Pure: the host executor
// runs the same segments in CPU tests.
#pragma once

#include <cstddef>
#include <vector>

#include "coll/plan.hpp"
#include "coll/plan_executor.hpp"
#include "coll/rank_links.hpp"

namespace peerlink::coll {

/// Elements [start, start + count) of the call's count (of every block, for the collectives whose buffers hold one
/// block per rank).
struct PlanSegment {
  std::size_t start = 0;
  std::size_t count = 0;
};

/// Whether `buffer` (Input or Output) of `collective` holds one block of the call's count per rank: all-gather's
/// output, reduce-scatter's input, both of all-to-all's.
bool holdsRankBlocks(Collective collective, BufferKind buffer) noexcept;

/// The segments of a call of `count` elements of `elementSize` bytes over `nranks` ranks such that no rank's
/// scratch or host stage in a segment's plan exceeds `capBytes` (at least one element per block): 16-byte
/// multiples except the last. One segment of count 0 for a call of 0 elements. Throws Error(InvalidUsage) for a
/// cap below 16 bytes per block.
std::vector<PlanSegment> planSegments(Collective collective, int nranks, std::size_t count, std::size_t elementSize,
                                      std::size_t capBytes);

/// A segment of a call and its staged plan (plan_staged.hpp), whose scratch and host stages reuse slots
/// (plan_slots.hpp).
struct StagedSegment {
  PlanSegment segment;
  Plan plan;
};

/// The staged plans of a call of `count` elements of `type` (arguments as buildStagedPlan's, out of place), each
/// rank's scratch and host stage within `capBytes`. Segments are as long as keeps a plan to about kSegmentChunks
/// chunks of `chunkBytes` per block, so a large call runs as one long pipeline; each plan's staging reuses slots a
/// chunk long, and where a plan still needs more than `capBytes` (many hops in flight at once) its chunk is halved
/// until it fits. Throws Error(InvalidUsage) as buildStagedPlan does, and Error(Internal) where not even chunks of
/// 16 bytes fit.
std::vector<StagedSegment> stagedSegments(Collective collective, int nranks, std::size_t count, int root, DataType type,
                                          const RankLinks& links, std::size_t chunkBytes, std::size_t capBytes);

/// Chunks per block (per shard for all-reduce) a segment of stagedSegments holds at most: a pipeline this long
/// spends a few percent of its steps filling and draining.
constexpr std::size_t kSegmentChunks = 128;

/// Where a segment's plan finds `buffer` (Input or Output) of a call of `count` elements in the user's buffer at
/// `base`: one extent, or one per rank block (holdsRankBlocks).
std::vector<BufferExtent> segmentExtents(Collective collective, BufferKind buffer, int nranks, std::size_t count,
                                         const PlanSegment& segment, const void* base, std::size_t elementSize);

/// One piece of a send/recv group (buildStagedSendRecvPlan's pairs) and where each of its pairs starts in the
/// pair's buffers.
struct GroupPiece {
  std::vector<PointToPoint> pairs;  ///< the pieces of the group's pairs that are not empty, in the group's order
  std::vector<std::size_t> starts;  ///< by `pairs`: the first element of the pair's buffers this piece moves
  std::vector<std::size_t> of;      ///< by `pairs`: the index of the group pair it is a piece of
};

/// A group of `pairs` cut into pieces such that no rank sends more than `capBytes` in one (every pair advances by
/// the same element count each piece). Pairs of 0 elements appear in no piece; a group of nothing has no piece.
/// Throws Error(InvalidUsage) for a cap too small for one element per pair.
std::vector<GroupPiece> groupPieces(const std::vector<PointToPoint>& pairs, int nranks, std::size_t elementSize,
                                    std::size_t capBytes);

/// A piece of a send/recv group and its staged plan (buildStagedSendRecvPlan over piece.pairs), whose host stages
/// reuse slots (plan_slots.hpp).
struct StagedPiece {
  GroupPiece piece;
  Plan plan;
};

/// The pieces of a group of `pairs` of `type` over ranks linked by `links` and their plans: pieces of up to
/// kSegmentChunks chunks of `chunkBytes` of a rank's sends, each plan's staging within `capBytes` as stagedSegments
/// makes it. Throws as groupPieces and buildStagedSendRecvPlan do.
std::vector<StagedPiece> stagedPieces(const std::vector<PointToPoint>& pairs, int nranks, DataType type,
                                      const RankLinks& links, std::size_t chunkBytes, std::size_t capBytes);

/// One rank's Input and Output extents in a piece's plan.
struct RankExtents {
  std::vector<BufferExtent> input;
  std::vector<BufferExtent> output;
};

/// Where a piece's plan (buildStagedSendRecvPlan over piece.pairs) finds each rank's Input -- its sends back to
/// back, in the piece's order -- and Output -- its receives; sendBuffers[i] and recvBuffers[i] are group pair i's.
std::vector<RankExtents> pieceExtents(const GroupPiece& piece, int nranks, const std::vector<const void*>& sendBuffers,
                                      const std::vector<const void*>& recvBuffers, std::size_t elementSize);

}  // namespace peerlink::coll
