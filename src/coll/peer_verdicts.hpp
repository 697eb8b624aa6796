// The doctor's verdicts a communicator's pair choice (pair_transport.hpp) uses, gathered as PEERLINK_VERIFY
// says. Not pure: it reads the verdict cache, and for `quick` probes the GPUs; the choice itself stays pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coll/pair_transport.hpp"
#include "coll/world.hpp"
#include "coll/world_exchange.hpp"

namespace peerlink::coll {

/// PEERLINK_VERIFY=off: none. cached: readCachedVerdicts(topology). quick: those, and when the cache lacks a
/// verdict for some ordered pair of `devices`, verifyPeers(devices, quick) (which answers cached pairs from the
/// cache and probes the rest: about a second; needs the GPUs). Throws what verifyPeers throws.
PeerVerdicts gatherPeerVerdicts(const Topology& topology, const std::vector<int>& devices, const Params& params);

/// The verdicts of a world of processes (world.hpp), the same on every rank. Each process reads its verdict cache
/// for the world's GPUs (`world.topology`, with this host's `driverVersion`), the readings are all-gathered through
/// `exchange`, and each pair gets the worst verdict any process read (mergeVerdictReadings): a pair one process's
/// cache knows BROKEN carries no peer traffic on any rank. PEERLINK_VERIFY, which every rank agrees on: off, none;
/// cached and quick, the caches (a process cannot probe GPUs it does not see, so quick probes nothing here).
/// Collective over the world; throws what the exchange throws.
PeerVerdicts gatherWorldVerdicts(const World& world, const std::string& driverVersion, const Params& params,
                                 WorldExchange& exchange);

/// One process's reading of `gpus` GPUs' verdicts as gpus x gpus bytes (src-major): 0 where it has none, else the
/// Verdict + 1.
std::vector<std::uint8_t> encodeVerdictReading(const PeerVerdicts& verdicts, int gpus);

/// The readings of every rank (`readings` holds them back to back, encodeVerdictReading's size each) merged: each
/// directed pair some reading has, with the worst verdict of those that have it (peerlink::worse), `source` naming
/// where they came from; `absence` when none has any. Throws Error(InvalidInput) for a reading of another size or
/// a byte that is no verdict.
PeerVerdicts mergeVerdictReadings(const std::vector<std::uint8_t>& readings, int gpus, const std::string& source,
                                  const std::string& absence);

}  // namespace peerlink::coll
