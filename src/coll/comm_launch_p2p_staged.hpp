// Send/recv groups of a world that spans processes (p2p_plan.hpp): each local rank plans its group from its own
// calls and launches on its stream its messages to itself, its LL kernel, then a copy kernel per round of the
// window, the sends of each round copied into its window slots first.
#pragma once

#include <vector>

#include "coll/comm_state.hpp"

namespace peerlink::coll {

/// Launches the group `calls` (every local rank's send and recv calls of one group, each validated, in call
/// order). Error(InvalidUsage) naming the call for a rank that gives two streams to one group, or streams of
/// which some are being captured and some not.
void launchCrossProcessGroup(CommState& state, const std::vector<CallArgs>& calls);

}  // namespace peerlink::coll
