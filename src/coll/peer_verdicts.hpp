// The doctor's verdicts a communicator's pair choice (pair_transport.hpp) uses, gathered as PEERLINK_VERIFY
// says. Not pure: it reads the verdict cache, and for `quick` probes the GPUs; the choice itself stays pure.
#pragma once

#include <vector>

#include "coll/pair_transport.hpp"

namespace peerlink::coll {

/// PEERLINK_VERIFY=off: none. cached: readCachedVerdicts(topology). quick: those, and when the cache lacks a
/// verdict for some ordered pair of `devices`, verifyPeers(devices, quick) (which answers cached pairs from the
/// cache and probes the rest: about a second; needs the GPUs). Throws what verifyPeers throws.
PeerVerdicts gatherPeerVerdicts(const Topology& topology, const std::vector<int>& devices, const Params& params);

}  // namespace peerlink::coll
