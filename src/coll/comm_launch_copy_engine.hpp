// Launchers of the collectives whose data the copy engines move (comm_launch_copy_engine.cc): all-gather and
// all-to-all as copies between two barrier kernels, and all-reduce as a reduce-scatter kernel followed by
// copies of each rank's shard. comm_launch.cc dispatches to them.
#pragma once

#include <vector>

#include "coll/comm_state.hpp"

namespace peerlink::coll {

/// All-gather and all-to-all (Kernel::CeCopy).
void launchCeCopySet(CommState& state, const std::vector<CallArgs>& set, bool capturing);

/// All-reduce: the direct-read reduce-scatter kernel (Kernel::CeTwoShot) or the ring reduces
/// (Kernel::CeRingAllReduce), then each rank's shard copied into every peer's output.
void launchCeTwoShotSet(CommState& state, const std::vector<CallArgs>& set, bool capturing);
void launchCeRingAllReduceSet(CommState& state, const std::vector<CallArgs>& set, bool capturing);

}  // namespace peerlink::coll
