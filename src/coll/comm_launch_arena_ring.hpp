// Calls on unregistered buffers across processes as the arena ring (arena_ring.hpp): one kernel a rank, its slots in
// the ranks' arenas. Internal to src/coll/.
#pragma once

#include <vector>

#include "coll/comm_state.hpp"

namespace peerlink::coll {

/// Whether `set` (one that needsStaging) runs as the arena ring: the communicator has the areas and
/// runsAsArenaRing says so for the call's shape. The same answer on every rank.
bool runsAsArenaRing(const CommState& state, const std::vector<CallArgs>& set);

/// Runs `set` (matched; set[r] for every local rank r) as the arena ring.
void launchArenaRingSet(const CommState& state, const std::vector<CallArgs>& set, bool capturing);

}  // namespace peerlink::coll
