// readCachedVerdicts (include/peerlink/doctor.hpp): the verdict cache read without probing.
#include <fmt/format.h>

#include "doctor/verdict_cache.hpp"
#include "peerlink/doctor.hpp"

namespace peerlink {

CachedVerdicts readCachedVerdicts(const Topology& topology, const Params& params) {
  CachedVerdicts result;
  if (params.getString("PEERLINK_DOCTOR_CACHE") == "off") {
    result.absence = "the doctor's verdict cache is off (PEERLINK_DOCTOR_CACHE=off)";
    return result;
  }
  std::string directory = params.getString("PEERLINK_DOCTOR_CACHE_DIR");
  if (directory.empty()) directory = defaultVerdictCacheDirectory();
  if (directory.empty()) {
    result.absence =
        "the doctor's verdict cache has no folder (PEERLINK_DOCTOR_CACHE_DIR, XDG_CACHE_HOME and HOME unset)";
    return result;
  }
  result.directory = directory;
  const std::string bootId = readBootId();
  if (bootId.empty()) {
    result.absence = "this boot's id is unreadable (/proc/sys/kernel/random/boot_id), so no cached verdict applies";
    return result;
  }
  const std::string commandLine = readKernelCommandLine();
  const VerdictCache cache(directory);
  const int gpus = static_cast<int>(topology.gpus.size());
  for (int src = 0; src < gpus; ++src) {
    for (int dst = 0; dst < gpus; ++dst) {
      if (src == dst) continue;
      const VerdictCacheKey key = makeVerdictCacheKey(topology, src, dst, bootId, commandLine, "");
      if (std::optional<CachedVerdict> cached = cache.loadAnyOptions(key, topology)) {
        result.pairs.push_back(cached->decision.verdict);
      }
    }
  }
  if (result.pairs.empty()) {
    result.absence =
        fmt::format("none cached in {} for this boot, driver and these GPUs (run `peerlink doctor`)", directory);
  }
  return result;
}

}  // namespace peerlink
