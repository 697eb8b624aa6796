// A communicator's creation and destruction: devices checked, peer access enabled between every pair, each
// rank's flags, LL scratch and counters allocated and zeroed on its GPU, every collective kernel loaded on
// every GPU (so no first launch waits behind a spinning kernel), the failure records in mapped host memory.
#pragma once

#include <vector>

#include "coll/comm_state.hpp"
#include "peerlink/params.hpp"

namespace peerlink::coll {

/// Fills `state` for ranks 0..n-1 on `devices`. Throws Error naming the problem: a device out of range or
/// repeated (InvalidUsage), no GPU (NoDevice), a pair without peer access (Unsupported), a CUDA failure.
void setupCommunicator(CommState& state, const std::vector<int>& devices, const Params& params);

/// Waits (bounded by the kernels' deadlines) until no kernel of the communicator can still touch its
/// buffers, so they can be freed. Disables no peer access: enabling is idempotent and others may use it.
void releaseCommunicator(CommState& state) noexcept;

}  // namespace peerlink::coll
