// What a call of a communicator with staged plans runs (comm_launch_plan.hpp runs it): LL lines through host
// memory, the host ring, or the staged plans in segments of chunks -- pure functions of the call and the links,
// shared by the launcher, `peerlink coll --explain` and `peerlink plan`.
#pragma once

#include <cstddef>
#include <vector>

#include "coll/host_ring_call.hpp"
#include "coll/rank_links.hpp"
#include "peerlink/collectives.hpp"
#include "peerlink/params.hpp"

namespace peerlink::coll {

/// The staged plans' chunk in bytes: PEERLINK_COLL_STAGED_CHUNK, or kPlanChunkBytes where it is 0.
std::size_t stagedChunkBytes(const Params& params);

/// The message a rank sends each peer when a call of `count` elements of `type` goes in LL lines through host
/// memory (kPlanLlMaxBytes; every collective but send/recv), in bytes; 0 where it goes as a staged plan.
std::size_t plannedLineBytes(Collective collective, std::size_t count, DataType type);

/// One message of a send/recv group: `bytes` from rank `from`'s `src` into rank `to`'s `dst`.
struct PairMessage {
  int from = 0;
  int to = 0;
  const void* src = nullptr;
  void* dst = nullptr;
  std::size_t bytes = 0;
};

/// A send/recv group of one process as LL lines through host memory, as the collectives' small calls go
/// (plannedLineBytes): one kernel a rank, every rank hearing from every other -- the message of its pair, or a token
/// line where the pair has none -- so the ranks' call numbers stay in step. `bytes` 0 where it cannot: a rank takes
/// no part (it has no stream to run on), a rank sends one peer two messages, or the messages differ in size or are
/// empty or larger than kPlanLlMaxBytes.
struct PairLines {
  struct Rank {
    std::vector<const void*> to;  ///< by peer: what this rank sends it (null: a token); [own rank]: the local copy's
    std::vector<void*> from;      ///< by peer: where its message lands (null: none); [own rank]: the local copy's
    unsigned int tokens = 0;      ///< the peers that send this rank a token
  };
  std::size_t bytes = 0;  ///< every message's size
  std::vector<Rank> ranks;
};

/// The lines of `messages` over `nranks` ranks (PairLines says when there are none). Pure.
PairLines plannedPairLines(const std::vector<PairMessage>& messages, int nranks);

/// Rank `rank`'s calls of a send/recv group as LL lines when they are a two-rank exchange (isTwoRankExchange) whose
/// message fits the lines: plannedPairLines of its send (from `send`) and its receive (into `recv`), as though it saw
/// the other rank's calls too -- across processes a rank sees only its own, and the other rank's mirror them, so both
/// decide alike. `bytes` 0 where the calls are not such an exchange or their message is empty or past
/// kPlanLlMaxBytes. Pure.
PairLines exchangePairLines(const std::vector<ExchangeSide>& calls, int rank, int nranks, const void* send, void* recv);

/// Whether each of the ranks 0..nranks-1 sends or receives some message of the group. Past the lines, a group of one
/// process runs as staged plans only then (a plan's step barriers wait for every rank of the communicator); one that
/// leaves a rank out goes pair by pair through the stages, as groups across processes do. Pure.
bool everyRankTakesPart(const std::vector<PairMessage>& messages, int nranks);

/// The message each rank sends when the ring shift of `count` elements of `type` over `nranks` ranks (rank r - 1
/// sends rank r one message: `peerlink coll`'s send/recv) goes in LL lines in one process (plannedPairLines), in
/// bytes; 0 where it goes as staged plans.
std::size_t ringShiftLineBytes(std::size_t count, DataType type, int nranks);

/// Whether a call of `count` elements of `type` of `collective` over `nranks` ranks goes in LL lines through host
/// memory: plannedLineBytes, or for send/recv the ring shift's ringShiftLineBytes (shared by stagedCallShape and
/// `peerlink plan`). Pure.
bool runsInLines(Collective collective, std::size_t count, DataType type, int nranks);

/// The way a call runs on a communicator with staged plans, as `peerlink coll` records it in each row and `peerlink
/// plan` costs it (plan/host_path.hpp names the first five alike).
enum class StagedWay {
  Lines,       ///< one LL kernel a rank through the LL areas in host memory (runsInLines)
  Ring,        ///< the host ring's rounds, or a two-rank exchange (runsAsHostRing)
  Chain,       ///< the host ring's chain from or to the root (broadcast, reduce)
  PlanKernel,  ///< the staged plans as one kernel a rank (runsAsOneKernel)
  PlanSteps,   ///< the staged plans step by step
  PairByPair,  ///< a send/recv group across processes, pair by pair through the stages (launchPlannedPointToPoint)
};

/// "host_lines", "host_ring", "host_chain", "plan_kernel", "plan_steps", "pair_by_pair".
const char* stagedWayName(StagedWay way) noexcept;

/// The way a call of `count` elements of `type` of `collective` over `nranks` ranks runs with the host ring up to
/// `hostRingMaxBytes` (PEERLINK_COLL_HOST_RING) and plans as one kernel where `oneKernel`
/// (PEERLINK_COLL_STAGED_KERNEL) allows; send/recv as the ring shift, which in one process goes as a group and
/// across processes rank by rank (only two ranks' exchange in lines or the ring there, else pair by pair). Pure.
StagedWay stagedWayOf(Collective collective, std::size_t count, DataType type, int nranks, std::size_t hostRingMaxBytes,
                      bool oneKernel, bool acrossProcesses);

/// What a call runs on a communicator with staged plans, for `peerlink coll --explain`: LL lines through host memory
/// (plannedLineBytes), the host ring (runsAsHostRing), or plans in `segments` segments of `steps` steps in all (the
/// step barriers between them not counted), each block (all-reduce: each shard) cut into `chunks` chunks of
/// `chunkBytes` in the first segment.
struct StagedCallShape {
  bool lines = false;
  bool hostRing = false;
  std::size_t segments = 0;
  std::size_t steps = 0;
  std::size_t chunks = 0;
  std::size_t chunkBytes = 0;
};

/// The shape of a call of `count` elements of `type` of `collective` over ranks linked by `links`, with the plans'
/// chunk `chunkBytes` (stagedChunkBytes), kPlanStageBytes of stage and the host ring up to `hostRingMaxBytes`
/// (PEERLINK_COLL_HOST_RING): what launchPlannedSet (send/recv: the ring shift as launchPlannedPairs runs it in
/// one process) runs. Pure.
StagedCallShape stagedCallShape(Collective collective, std::size_t count, DataType type, const RankLinks& links,
                                std::size_t chunkBytes, std::size_t hostRingMaxBytes);

}  // namespace peerlink::coll
