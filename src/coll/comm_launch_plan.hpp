// Calls of a communicator whose ranks cannot all reach each other directly (rank_transport.hpp): every collective
// and send/recv group of one process runs as a staged plan (plan_staged.hpp) -- rings over the ways the pairs allow,
// host-staged hops through each rank's stage in host memory -- carried out by the plan executor
// (plan_executor.hpp), segment after segment (segment_plans.hpp) over the scratch and stages the communicator keeps
// (PlannedWays); small collectives go as one LL kernel a rank through LL areas in host memory instead; send/recv
// across processes goes pair by pair through the stages (staged_p2p.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "coll/comm_state.hpp"
#include "coll/comm_validation.hpp"
#include "coll/planned_calls.hpp"
#include "coll/rank_links.hpp"
#include "coll/world_exchange.hpp"

namespace peerlink::coll {

/// The buffers of the staged plans for `links`: each local rank's scratch of kPlanStageBytes on its GPU, barrier
/// counters and copy lanes; every rank's step flags, LL area and host stage of kPlanStageBytes, pinned (one
/// process) or in shared host memory (across processes: collective over the world through `exchange`).
std::unique_ptr<PlannedWays> makePlannedWays(const CommState& state, RankLinks links, WorldExchange& exchange);

/// What a call of `collective` moving `bytes` runs on such a communicator, for Communicator::describeChoice: "staged
/// plan (WAY): ..." with the call's way (stagedWayOf, named by stagedWayName), which `peerlink coll` records in its
/// rows and `peerlink plan` reads back.
std::string describePlannedChoice(const CommState& state, Collective collective, std::size_t bytes);

/// Runs a matched collective set (set[r] is rank r's call) through the staged plans, a small one in LL lines
/// through the ranks' LL areas in host memory (plannedLineBytes), or one the host ring takes (runsAsHostRing) as
/// that ring; `capturing` as launchCollectiveSet's.
void launchPlannedSet(CommState& state, const std::vector<CallArgs>& set, bool capturing);

/// Runs matched send/recv pairs of one process: as LL lines through the ranks' LL areas in host memory where the
/// group allows (plannedPairLines; not with PEERLINK_PROTO=SIMPLE), else through the staged plans where every rank
/// takes part, else pair by pair (everyRankTakesPart); streams[r]: rank r's stream in the group, where it takes
/// part; `capturing` as launchCollectiveSet's.
void launchPlannedPairs(CommState& state, const std::vector<SendRecvPair>& pairs,
                        const std::vector<cudaStream_t>& streams, bool capturing);

/// Queues rank `rank`'s calls of a send/recv group (in order, on `stream`; its GPU current) where they are a two-rank
/// exchange (isTwoRankExchange: a message each way of one count and type, its sends to itself copied beside): in LL
/// lines where the message fits them (exchangePairLines; not with PEERLINK_PROTO=SIMPLE), else as the host ring's
/// exchange within PEERLINK_COLL_HOST_RING (runsAsHostRingExchange); false, queuing nothing, where neither takes them.
/// Each rank decides from its own calls, so it serves groups across processes. `capturing` as launchCollectiveSet's.
bool launchedAsTwoRankExchange(CommState& state, int rank, const std::vector<const CallArgs*>& calls,
                               cudaStream_t stream, bool capturing);

/// Queues a send/recv group across processes for local rank `rank` (its calls, in order, on `stream`) through the
/// host stages (staged_p2p.hpp): every rank's part of a group runs alone, meeting its peers pair by pair.
void launchPlannedPointToPoint(CommState& state, int rank, const std::vector<const CallArgs*>& calls,
                               cudaStream_t stream);

}  // namespace peerlink::coll
