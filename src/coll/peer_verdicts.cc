// Gathering the verdicts (peer_verdicts.hpp).
#include "coll/peer_verdicts.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "peerlink/error.hpp"

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

std::vector<std::uint8_t> encodeVerdictReading(const PeerVerdicts& verdicts, int gpus) {
  std::vector<std::uint8_t> reading(static_cast<std::size_t>(gpus) * static_cast<std::size_t>(gpus), 0);
  for (const PairVerdict& pair : verdicts.pairs) {
    if (pair.src < 0 || pair.dst < 0 || pair.src >= gpus || pair.dst >= gpus || pair.src == pair.dst) continue;
    reading[static_cast<std::size_t>(pair.src * gpus + pair.dst)] = static_cast<std::uint8_t>(pair.verdict) + 1;
  }
  return reading;
}

PeerVerdicts mergeVerdictReadings(const std::vector<std::uint8_t>& readings, int gpus, const std::string& source,
                                  const std::string& absence) {
  const std::size_t size = static_cast<std::size_t>(gpus) * static_cast<std::size_t>(gpus);
  if (size == 0 || readings.size() % size != 0) {
    throw Error(ErrorCode::InvalidInput, fmt::format("verdict readings: {} bytes for {} GPUs ({} bytes a reading)",
                                                     readings.size(), gpus, size));
  }
  PeerVerdicts merged;
  merged.source = source;
  for (int src = 0; src < gpus; ++src) {
    for (int dst = 0; dst < gpus; ++dst) {
      if (src == dst) continue;
      std::optional<Verdict> verdict;
      for (std::size_t at = static_cast<std::size_t>(src * gpus + dst); at < readings.size(); at += size) {
        const std::uint8_t code = readings[at];
        if (code == 0) continue;
        if (code > static_cast<std::uint8_t>(Verdict::Unsupported) + 1) {
          throw Error(ErrorCode::InvalidInput, fmt::format("verdict readings: {} is no verdict", code));
        }
        const auto read = static_cast<Verdict>(code - 1);
        verdict = verdict ? worse(*verdict, read) : read;
      }
      if (verdict) merged.pairs.push_back({src, dst, *verdict, {}});
    }
  }
  if (merged.pairs.empty()) merged.absence = absence;
  return merged;
}

PeerVerdicts gatherWorldVerdicts(const World& world, const std::string& driverVersion, const Params& params,
                                 WorldExchange& exchange) {
  if (verifyPolicy(params) == VerifyPolicy::Off) return {{}, "", "PEERLINK_VERIFY=off"};
  // The world's GPUs as this host's cache names them: bus id, UUID and the driver (the cards carry no driver).
  Topology lookup = world.topology;
  lookup.driverVersion = driverVersion;
  const auto gpus = static_cast<int>(lookup.gpus.size());
  const CachedVerdicts cached = readCachedVerdicts(lookup, params);
  const std::vector<std::uint8_t> reading = encodeVerdictReading(peerVerdictsFrom(cached), gpus);
  const std::vector<std::vector<std::uint8_t>> mine(world.localRanks.size(), reading);
  const std::vector<std::uint8_t> all = exchange.allGather(mine, reading.size());
  return mergeVerdictReadings(all, gpus, "cached by peerlink doctor (every process's cache: the worst of each pair)",
                              cached.absence.empty() ? "none cached for these GPUs" : cached.absence);
}

}  // namespace peerlink::coll
