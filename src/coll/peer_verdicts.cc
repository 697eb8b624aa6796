// Gathering the verdicts (peer_verdicts.hpp).
#include "coll/peer_verdicts.hpp"

#include <algorithm>

namespace peerlink::coll {
namespace {

bool coversEveryPair(const PeerVerdicts& verdicts, const std::vector<int>& devices) {
  for (int src : devices) {
    for (int dst : devices) {
      if (src == dst) continue;
      const bool found = std::any_of(verdicts.pairs.begin(), verdicts.pairs.end(),
                                     [&](const PairVerdict& v) { return v.src == src && v.dst == dst; });
      if (!found) return false;
    }
  }
  return true;
}

}  // namespace

PeerVerdicts gatherPeerVerdicts(const Topology& topology, const std::vector<int>& devices, const Params& params) {
  const VerifyPolicy policy = verifyPolicy(params);
  if (policy == VerifyPolicy::Off) return {{}, "", "PEERLINK_VERIFY=off"};
  PeerVerdicts cached = peerVerdictsFrom(readCachedVerdicts(topology, params));
  if (policy == VerifyPolicy::Cached || coversEveryPair(cached, devices)) return cached;
  VerifyOptions options;
  options.quick = true;
  const VerifyResult result = verifyPeers(devices, options, params);
  return {result.report.pairs, "probed at communicator creation (PEERLINK_VERIFY=quick)", ""};
}

}  // namespace peerlink::coll
