// Plans for a world whose GPU pairs are a mix of direct (peer access), relayed and host-staged ways
// (rank_links.hpp): every collective as a ring over the available paths (all-to-all and send/recv pair by
// pair), each hop going the way its pair allows.
//
// A hop moves a chunk from rank `from` to rank `to` in two phases:
// - host-staged: `from` copies (or reduces) the chunk into its host stage (device to host, phase 2h), then
//   `to` copies it from there into its own buffer (host to device, phase 2h+1);
// - direct: `from` stores into `to`'s buffer (phase 2h+1);
// - relayed through rank k: k reads `from`'s buffer and stores into `to`'s (phase 2h+1).
// Plans are pipelined by chunk (chunk c's phase p runs at step c + p), so chunk c's host-to-device half runs in
// the same step as chunk c+1's device-to-host half: the two halves of a staged hop overlap. Host stages and
// scratch hold the whole data at its offsets here, as the ring plans' scratch does (plan_builders.cc);
// reuseStagingSlots (plan_slots.hpp) then folds them onto a few chunk slots that the step barriers keep from being
// refilled too early.
#pragma once

#include <cstddef>
#include <vector>

#include "coll/plan.hpp"
#include "coll/rank_links.hpp"

namespace peerlink::coll {

/// Whether `links` need these plans: some pair of different ranks is not Direct.
bool needsStagedPlans(const RankLinks& links);

/// The plan of `collective` (arguments as buildPlan's) over `nranks` ranks linked by `links`: all-reduce,
/// reduce-scatter, reduce, broadcast and all-gather along chooseRing(links) (Algorithm::Ring); all-to-all and
/// the send/recv ring shift pair by pair (Algorithm::OneShot). Throws Error(InvalidUsage) as buildPlan does,
/// and for links of another size or that do not hold together (validateRankLinks).
Plan buildStagedPlan(Collective collective, int nranks, std::size_t count, int root, bool inPlace,
                     std::size_t chunkElements, DataType type, const RankLinks& links);

/// A group of send/recv pairs (laid out as buildSendRecvPlan lays them), each going its pair's way.
Plan buildStagedSendRecvPlan(const std::vector<PointToPoint>& pairs, DataType type, std::size_t chunkElements,
                             const RankLinks& links);

}  // namespace peerlink::coll
