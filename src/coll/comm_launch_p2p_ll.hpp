// Send/recv groups in LL lines (kernels::launchCollP2pLl, coll_p2p_ll.cu): every rank's messages of a
// matched group as the kernel takes them, and the group's launch. Internal to src/coll/.
#pragma once

#include <vector>

#include "coll/comm_state.hpp"
#include "coll/comm_validation.hpp"
#include "kernels/coll_kernels.cuh"

namespace peerlink::coll {

/// Places every rank's messages of `pairs` (paired in call order, matchSendRecvs) into args[r]'s sends
/// (to peers other than r) and recvs (a send to itself is a receive with its source), args.size() ranks:
/// each of a pair's messages after the pair's earlier ones in the pair's slot, counted in lines, in the order
/// of `pairs`, so the sender's and the receiver's jobs agree; messages of 0 bytes left out. Touches only
/// the jobs and their counts. False where the lines do not fit: a rank with more than kCollMaxJobs sends or
/// receives, or a pair whose lines overflow its slot (kCollP2pLlSlotBytes).
bool placeP2pLlJobs(const std::vector<SendRecvPair>& pairs, std::vector<kernels::CollP2pLlArgs>& args);

/// Launches the group in LL lines on every rank with a peer (peerMasks[r] != 0), on streams[r]: through its
/// eager graph, or directly when `capturing`. Returns false, launching nothing, where the messages do not fit
/// (placeP2pLlJobs): the caller runs the group's copy form instead.
bool launchLlSendRecvPairs(CommState& state, const std::vector<SendRecvPair>& pairs,
                           const std::vector<cudaStream_t>& streams, const std::vector<unsigned int>& peerMasks,
                           bool capturing);

}  // namespace peerlink::coll
