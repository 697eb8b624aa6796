// verifyPeers (include/peerlink/doctor.hpp): topology, platform findings, the verdict cache and the
// functional probe, put together into one report.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/log.hpp"
#include "doctor/doctor_verdict.hpp"
#include "doctor/functional_probe.hpp"
#include "doctor/platform_checks.hpp"
#include "doctor/platform_snapshot.hpp"
#include "doctor/shortage_checks.hpp"
#include "doctor/verdict_cache.hpp"
#include "peerlink/doctor.hpp"
#include "peerlink/error.hpp"
#include "peerlink/transport.hpp"

namespace peerlink {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<int> chooseDevices(const Topology& topology, const std::vector<int>& requested) {
  const int count = static_cast<int>(topology.gpus.size());
  if (requested.empty()) {
    std::vector<int> all(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) all[static_cast<std::size_t>(i)] = i;
    return all;
  }
  std::set<int> seen;
  for (int device : requested) {
    if (device < 0 || device >= count) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("GPU {} does not exist: this process sees {} GPU(s), 0..{}", device, count, count - 1));
    }
    if (!seen.insert(device).second) {
      throw Error(ErrorCode::InvalidUsage, fmt::format("GPU {} is listed twice", device));
    }
  }
  return requested;
}

// The probe's own parameters: the user's, except that peer access is allowed on every pair CUDA offers it
// (the doctor tests the hardware path whatever routes peerlink would choose) and deadlines are the probe's.
Params probeParams(Params params, const VerifyOptions& options) {
  params.set("PEERLINK_P2P_DISABLE", "0");
  params.set("PEERLINK_P2P_LEVEL", "SYS");
  params.set("PEERLINK_TIMEOUT_MS", std::to_string(options.timeout.count()));
  return params;
}

// What shaped a verdict besides the pair: a quick verdict must not answer for a full one.
std::string cacheOptions(const VerifyOptions& options, std::size_t bytes, bool crossProcess) {
  return fmt::format("{} bytes={} timeout_ms={} cross_process={} helper_visible={}", options.quick ? "quick" : "full",
                     bytes, options.timeout.count(), crossProcess ? 1 : 0,
                     options.helperVisibleDevices.value_or("(inherited)"));
}

}  // namespace

VerifyResult verifyPeers(const std::vector<int>& requestedDevices, const VerifyOptions& options, const Params& params) {
  const auto start = Clock::now();
  VerifyResult result;
  try {
    result.topology = discoverTopology(params);
  } catch (const Error& error) {
    // CUDA or discovery could not start: what this process is short of is the likely cause, not the GPUs.
    const Topology none;
    throw Error(error.code(), explainStartFailure(error.what(), checkPlatform(none, readPlatformSnapshot(none))));
  }
  const Topology& topology = result.topology;
  const std::vector<int> devices = chooseDevices(topology, requestedDevices);
  const bool discovered = topology.source == "discovered";
  const bool crossProcess = !options.helperExecutable.empty();
  const std::size_t bytes =
      options.probeBytes != 0 ? options.probeBytes : (options.quick ? std::size_t{1} << 20 : std::size_t{32} << 20);

  std::vector<Finding> platform;
  if (!options.quick) platform = checkPlatform(topology, readPlatformSnapshot(topology));
  if (!crossProcess) {
    platform.push_back({"cross_process_not_probed",
                        Verdict::Ok,
                        "the cross-process methods (ipc, cumem) were not probed: no helper executable was given",
                        "run `peerlink doctor`, or pass VerifyOptions::helperExecutable (the peerlink CLI)",
                        {},
                        ""});
  }
  VerdictThresholds thresholds;
  if (!crossProcess) {
    auto& required = thresholds.requiredMethods;
    required.erase(std::remove_if(required.begin(), required.end(),
                                  [](const std::string& m) { return m == "ipc" || m == "cumem"; }),
                   required.end());
  }

  // The cache answers what it can; the rest is probed.
  const std::string cacheMode = params.getString("PEERLINK_DOCTOR_CACHE");
  std::optional<VerdictCache> cache;
  if (cacheMode != "off") {
    std::string directory = params.getString("PEERLINK_DOCTOR_CACHE_DIR");
    if (directory.empty()) directory = defaultVerdictCacheDirectory();
    if (!directory.empty() && discovered) cache.emplace(directory);
  }
  if (cache) result.cacheDirectory = cache->directory();
  const std::string bootId = readBootId();
  const std::string commandLine = readKernelCommandLine();
  const std::string optionsText = cacheOptions(options, bytes, crossProcess);

  std::vector<PairDecision> decisions;
  std::vector<DirectedPair> toProbe;
  for (int src : devices) {
    for (int dst : devices) {
      if (src == dst) continue;
      if (cache && cacheMode == "on") {
        const VerdictCacheKey key = makeVerdictCacheKey(topology, src, dst, bootId, commandLine, optionsText);
        if (std::optional<CachedVerdict> hit = cache->load(key, topology)) {
          decisions.push_back(std::move(hit->decision));
          ++result.cachedPairs;
          continue;
        }
      }
      toProbe.emplace_back(src, dst);
    }
  }

  if (!toProbe.empty() && discovered) {
    std::vector<DirectedPair> withP2p;
    for (const DirectedPair& pair : toProbe) {
      if (topology.pair(pair.first, pair.second).canAccessPeer) withP2p.push_back(pair);
    }
    ProbeOptions probe;
    probe.bytes = bytes;
    probe.timedIterations = options.quick ? 0 : 4;
    probe.timeout = options.timeout;
    probe.helperExecutable = options.helperExecutable;
    probe.helperVisibleDevices = options.helperVisibleDevices;
    probe.progress = options.progress;
    Transport transport(topology, probeParams(params, options));
    auto append = [&](std::vector<ProbeResult> more) {
      result.probes.insert(result.probes.end(), std::make_move_iterator(more.begin()),
                           std::make_move_iterator(more.end()));
    };
    append(probeCopies(transport, withP2p, probe));
    append(probeFlagHandshakes(transport, withP2p, probe));
    if (crossProcess) append(probeCrossProcess(transport, withP2p, probe));
  } else if (!toProbe.empty()) {
    platform.push_back({"topology_from_file",
                        Verdict::Ok,
                        fmt::format("the topology came from {}, not from this machine's GPUs: nothing was probed, "
                                    "so no pair with P2P can be OK",
                                    topology.source),
                        "run without PEERLINK_TOPO_FILE / --topo-file on the machine itself",
                        {},
                        ""});
  }

  // Decide the probed pairs against the full topology, then keep only those we probed.
  std::vector<PairDecision> fresh = decidePairs(topology, platform, result.probes, thresholds);
  for (PairDecision& decision : fresh) {
    const DirectedPair pair(decision.verdict.src, decision.verdict.dst);
    if (std::find(toProbe.begin(), toProbe.end(), pair) == toProbe.end()) continue;
    if (cache && cacheMode != "off" && discovered) {
      const VerdictCacheKey key =
          makeVerdictCacheKey(topology, pair.first, pair.second, bootId, commandLine, optionsText);
      if (!cache->store(key, topology, decision)) {
        logInfo(LogSubsys::Doctor, "verdict cache: could not store {} -> {} in {}", pair.first, pair.second,
                cache->directory());
      }
    }
    decisions.push_back(std::move(decision));
  }
  result.report = assembleReport(decisions, platform);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace peerlink
