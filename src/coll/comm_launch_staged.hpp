// Calls of a world that spans processes whose kernels would need a peer's buffers, which this process cannot
// reach unless registered (or of one process under PEERLINK_COLL_STAGE_UNREGISTERED, testing): they run through
// the staging windows (staging_plan.hpp) -- copies into each local rank's window, the collective between the
// windows (every rank has every window mapped), the copies out -- chunk after chunk, in the windows' halves by
// turns, the copies on each rank's copy stream overlapping the kernels on the caller's (staging_schedule.hpp says
// in which order and why that is safe); all stream-ordered and capturable.
#pragma once

#include <vector>

#include "coll/comm_state.hpp"

namespace peerlink::coll {

/// Whether a set of a world that spans processes must go through the windows: its kernel touches a peer's
/// buffers (every kernel whose data flow is not ThroughStages; the LL ones touch only the caller's buffers and
/// the peers' arenas). The same answer on every rank: it depends on the call's shape and the world only.
bool needsStaging(CommState& state, const std::vector<CallArgs>& set);

/// Runs `set` (matched; set[r] for every local rank r) through the windows.
void launchStagedSet(CommState& state, const std::vector<CallArgs>& set, bool capturing);

}  // namespace peerlink::coll
