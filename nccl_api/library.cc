#include "nccl_api/library.hpp"

#include "core/log.hpp"
#include "nccl_api/config.hpp"
#include "nccl_api/platform.hpp"

namespace peerlink::nccl {
namespace {

ShimParts makeParts() {
  ShimParts parts;
  parts.platform = makeCudaPlatform();
  try {
    ApiSettings settings = apiSettingsFrom(Params::fromEnvironment());
    configureLogging(settings.params);
    if (settings.fallback == Fallback::None) {
      parts.realFailure = "PEERLINK_NCCL_FALLBACK=NONE";
    } else {
      // This library's own ncclGetVersion: a candidate that resolves to it (by SONAME or a link) is skipped.
      RealNcclLoad load = loadRealNccl(settings.library, reinterpret_cast<const void*>(&::pncclGetVersion));
      parts.real = std::move(load.api);
      parts.realFailure = load.reason;
      if (parts.real != nullptr) {
        logInfo(LogSubsys::Init, "NCCL API: the real NCCL for what peerlink does not serve: {} (NCCL {})",
                parts.real->path, versionText(parts.real->versionCode));
      } else {
        logInfo(LogSubsys::Init, "NCCL API: no real NCCL to forward to: {}", load.reason);
      }
    }
    parts.settings = std::move(settings);
  } catch (const std::exception& error) {
    parts.settings = Failure{ncclInvalidUsage, error.what()};
  }
  try {
    parts.launch = detectLaunchFromEnvironment();
  } catch (const std::exception& error) {
    logWarn(LogSubsys::Init, "NCCL API: the launcher's variables are not understood ({}); taken as one process",
            error.what());
  }
  return parts;
}

// At load: the real NCCL must be loaded (deep-bound) before the application loads it.
__attribute__((constructor)) void makeAtLoad() {
  processShim();
}

}  // namespace

Shim& processShim() {
  static Shim* const shim = new Shim(makeParts());
  return *shim;
}

}  // namespace peerlink::nccl
