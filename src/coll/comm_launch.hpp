// Turning a matched set of calls into kernel launches: the kernel (chooseCollective, from the call's size and
// the facts of its buffers), every rank's kernel arguments from the peer pointer table, and one launch per
// rank on its stream. Nothing here blocks, allocates device memory or copies from the host, so
// a set is capturable in a CUDA graph.
#pragma once

#include <string>
#include <vector>

#include "coll/comm_state.hpp"
#include "coll/comm_validation.hpp"

namespace peerlink::coll {

/// What a call of `collective` with `bytes` per rank runs on this communicator (chooseCollective), remembered
/// per collective so a loop of equal calls builds no reasons; `inPlace`: some rank calls it in place;
/// `aligned`: every buffer it touches starts on a 16-byte boundary.
const CollectiveChoice& callChoice(CommState& state, Collective collective, std::size_t bytes, Fact inPlace,
                                   Fact aligned);

/// The peer pointer table of a set: every rank's send and recv as the GPUs address them.
PeerPointerTable peerPointers(const CommState& state, const std::vector<CallArgs>& set);

/// Launches the set (set[r] is rank r's call, already validated and matched) on every rank's stream;
/// `capturing`: the streams are being captured into a graph (else the launches go through each rank's
/// eager KernelGraph, the cheaper way on the host).
void launchCollectiveSet(CommState& state, const std::vector<CallArgs>& set, bool capturing);

/// Launches matched send/recv pairs: one kernel on every rank that takes part -- for small groups
/// (callChoice: Kernel::LlPairs) the senders' LL lines (comm_launch_p2p_ll.hpp), else the receivers pull between
/// barriers -- or for large groups (Kernel::CeCopy) the senders' copy engines between two barrier kernels.
void launchSendRecvPairs(CommState& state, const std::vector<SendRecvPair>& pairs);

}  // namespace peerlink::coll
