// Launchers of the collectives whose data the copy engines move (comm_launch_copy_engine.cc): all-gather,
// all-to-all and send/recv as copies between two barrier kernels, and all-reduce as a reduce-scatter kernel
// followed by copies of each rank's shard. comm_launch.cc dispatches to them.
#pragma once

#include <vector>

#include "coll/comm_launch.hpp"
#include "coll/comm_state.hpp"
#include "coll/comm_validation.hpp"

namespace peerlink::coll {

/// All-gather and all-to-all (Kernel::CeCopy).
void launchCeCopySet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers, bool capturing);

/// All-reduce: the direct-read reduce-scatter kernel (Kernel::CeTwoShot) or the ring reduces
/// (Kernel::CeRingAllReduce), then each rank's shard copied into every peer's output.
void launchCeTwoShotSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                        bool capturing);
void launchCeRingAllReduceSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                              bool capturing);

/// Send/recv pairs (Kernel::CeCopy): rank r takes part where peerMasks[r] (the ranks it meets) is not 0, on
/// streams[r]; each sender's copy engine pushes its sends into the receivers' buffers. `capturing`: the
/// group's streams are being captured (checkGroupCapture), as for the collectives' launchers.
void launchCeSendRecvPairs(CommState& state, const std::vector<SendRecvPair>& pairs,
                           const std::vector<cudaStream_t>& streams, const std::vector<unsigned int>& peerMasks,
                           bool capturing);

}  // namespace peerlink::coll
