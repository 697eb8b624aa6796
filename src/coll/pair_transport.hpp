// How a communicator's data goes between each ordered pair of its GPUs -- peer access, a relay through a GPU of
// the communicator both reach, or a stage in pinned host memory -- chosen as data from the topology, the
// settings (PEERLINK_P2P_DISABLE, PEERLINK_P2P_LEVEL, PEERLINK_RELAY, PEERLINK_RELAY_GPU, PEERLINK_P2P_MODE,
// PEERLINK_VERIFY) and, when there are some, the doctor's functional verdicts. Each pair's choice is the
// route's (selectRoute, route.hpp) over the topology with two more facts: a pair the doctor found BROKEN is
// denied P2P (GpuPair::p2pDenied), and GPUs outside the communicator relay nothing. The plans that carry
// collectives over the result are plan_staged.hpp's; rankLinksOf hands it to them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "coll/rank_links.hpp"
#include "peerlink/doctor.hpp"
#include "peerlink/params.hpp"
#include "peerlink/route.hpp"
#include "peerlink/topology.hpp"

namespace peerlink::coll {

/// PEERLINK_VERIFY: which verdicts the choice trusts.
enum class VerifyPolicy {
  Cached,  ///< the verdicts `peerlink doctor` cached for this boot, when there are some
  Quick,   ///< those, and a quick probe (verifyPeers with quick) of the pairs without one
  Off,     ///< none
};
VerifyPolicy verifyPolicy(const Params& params);

/// The doctor's verdicts for some directed pairs (CUDA ordinals), with where they came from.
struct PeerVerdicts {
  std::vector<PairVerdict> pairs;
  std::string source;   ///< for reasons: "cached by peerlink doctor", "probed at communicator creation"
  std::string absence;  ///< when `pairs` is empty: why (the cache's own words)
};

/// readCachedVerdicts' answer as PeerVerdicts.
PeerVerdicts peerVerdictsFrom(const CachedVerdicts& cached);

/// One ordered pair's way.
struct PairChoice {
  int srcRank = -1;
  int dstRank = -1;
  int srcGpu = -1;  ///< CUDA ordinals (indices into the topology)
  int dstGpu = -1;
  PairWay way = PairWay::HostStaged;
  RouteMode mode = RouteMode::Staged;  ///< the route's mode: DIRECT, IPC or CUMEM for PairWay::Direct
  int relayGpu = -1;                   ///< Relay only
  int relayRank = -1;                  ///< Relay only: the relay GPU's rank
  std::string link;                    ///< "NV18", "PIX", "SYS" (linkLabel)
  std::optional<Verdict> verdict;      ///< the doctor's verdict of the pair, when one was given and used
  std::string why;                     ///< why this way, one line, without the pair and the way
};

/// Every ordered pair of a communicator's ranks.
struct PairTransport {
  std::vector<int> devices;  ///< rank r's GPU (CUDA ordinal)
  ProcessBoundary boundary = ProcessBoundary::SameProcess;
  std::vector<PairChoice> pairs;  ///< (src, dst) rank order, src != dst
  std::string verdicts;           ///< one line: which verdicts the choice used, or why none

  /// The pair srcRank -> dstRank; Error(InvalidUsage) when it is not one.
  const PairChoice& at(int srcRank, int dstRank) const;
};

/// The way of every ordered pair of `devices` (rank r on GPU devices[r]) on `topology` under `params`, across
/// `boundary` (CrossProcess: one process per GPU, whose peer access is IPC or cuMem and which never relays),
/// with `verdicts` when given and PEERLINK_VERIFY is not off. Throws Error(InvalidUsage) for devices out of the
/// topology or repeated, and as selectRoute does when PEERLINK_P2P_MODE forces a mode a pair cannot use.
PairTransport choosePairTransport(const Topology& topology, const std::vector<int>& devices, const Params& params,
                                  ProcessBoundary boundary, const PeerVerdicts* verdicts);

/// The ways as the staged plans take them.
RankLinks rankLinksOf(const PairTransport& transport);

/// "GPU 0 -> GPU 2: host-staged: no usable P2P: the doctor found GPU 0 -> GPU 2 BROKEN (...)": one line for the
/// log (PEERLINK_DEBUG_SUBSYS=P2P).
std::string describePairChoice(const PairChoice& choice);

/// A table for people: a header line (the verdicts used, the ring the staged plans follow), then one row per
/// pair: ranks, GPUs, link, way, why.
std::string formatPairTransport(const PairTransport& transport);

}  // namespace peerlink::coll
