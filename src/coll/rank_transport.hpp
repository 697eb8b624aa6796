// How the ranks of a communicator reach each other (rank_links.hpp), from each GPU pair's way (pair_transport.hpp):
// ranks on one GPU (PEERLINK_COLL_SHARE_GPUS) share its memory, a relay goes through a rank on the relay GPU, ranks
// of different processes meet only in the host stages once any pair needs them, and PEERLINK_COLL_HOST_STAGED
// forces pairs through host memory so the staged plans run where P2P works too (tests). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "coll/pair_transport.hpp"
#include "coll/rank_links.hpp"

namespace peerlink::coll {

struct RankTransport {
  RankLinks links;
  /// One line per ordered pair of ranks that is not Direct: "rank 0 (GPU 0) -> rank 2 (GPU 2): host-staged:
  /// ...why".
  std::vector<std::string> reasons;
  std::string verdicts;  ///< which doctor verdicts the choice used, or why none (PairTransport::verdicts)
};

/// PEERLINK_COLL_HOST_STAGED's value: "" (none), "all", or pairs of ranks "0-2,1-3" (both directions of each).
/// Throws Error(InvalidUsage) naming the entry that is not a pair of two different ranks below `nranks`.
std::vector<std::pair<int, int>> forcedHostStagedPairs(const std::string& value, int nranks);

/// The ways of a communicator whose rank r is on GPU rankDevices[r] (CUDA ordinals of `topology`; repeated where
/// ranks share a GPU), with the doctor's `verdicts` when given. `rankProcess[r]`: which process drives rank r
/// (empty: one process drives every rank). Across processes no pair relays, and where the staged plans are needed
/// at all every pair of ranks in different processes is host-staged: a process reaches another's buffers only
/// through the host stages. Throws as choosePairTransport and forcedHostStagedPairs do.
RankTransport chooseRankTransport(const Topology& topology, const std::vector<int>& rankDevices, const Params& params,
                                  const PeerVerdicts* verdicts, const std::vector<std::int64_t>& rankProcess = {});

}  // namespace peerlink::coll
