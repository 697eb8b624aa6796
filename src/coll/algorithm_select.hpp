// Which algorithm a collective uses, as a pure function of the call and the topology (tested on CPU for
// every fixture). The communicator asks it at every call; PEERLINK_ALGO forces one.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "peerlink/collectives.hpp"
#include "peerlink/topology.hpp"

namespace peerlink::coll {

struct AlgorithmChoice {
  Algorithm algorithm = Algorithm::OneShot;
  std::string reason;  ///< one line for logs and `describeChoice`, e.g. "4 KiB per rank: one-shot (latency-bound)"
};

/// The algorithms `collective` has, in order of preference for large messages.
std::vector<Algorithm> algorithmsOf(Collective collective);

/// The algorithm for `collective` with `bytesPerRank` (the per-rank send size) over the GPUs `devices` of
/// `topology`. `forced` (from PEERLINK_ALGO) wins when the collective has it; Auto or an algorithm the
/// collective does not have falls back to the size rule, and the reason says so.
AlgorithmChoice chooseAlgorithm(Collective collective, std::size_t bytesPerRank, const Topology& topology,
                                const std::vector<int>& devices, Algorithm forced = Algorithm::Auto);

}  // namespace peerlink::coll
