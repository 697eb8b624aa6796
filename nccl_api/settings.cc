#include "nccl_api/settings.hpp"

#include <fmt/format.h>

namespace peerlink::nccl {

const char* fallbackName(Fallback fallback) noexcept {
  switch (fallback) {
    case Fallback::Auto: return "AUTO";
    case Fallback::None: return "NONE";
    case Fallback::All: return "ALL";
  }
  return "?";
}

ApiSettings apiSettingsFrom(Params params) {
  for (const char* name : {"PEERLINK_TIMEOUT_MS", "PEERLINK_BOOTSTRAP_TIMEOUT_MS"}) {
    for (const ParamValue& value : params.values()) {
      if (value.spec->name == name && value.source == ParamSource::Default) params.set(name, kApiDeadlineMs);
    }
  }
  ApiSettings settings;
  const std::string& fallback = params.getString("PEERLINK_NCCL_FALLBACK");
  settings.fallback = fallback == "NONE" ? Fallback::None : fallback == "ALL" ? Fallback::All : Fallback::Auto;
  settings.versionCode = static_cast<int>(params.getInt("PEERLINK_NCCL_VERSION"));
  settings.library = params.getString("PEERLINK_NCCL_LIBRARY");
  settings.params = std::move(params);
  return settings;
}

std::variant<Server, Failure> chooseIdServer(Fallback fallback, const LaunchEnvironment& launch, bool ncclLoaded,
                                             const std::string& loadFailure) {
  if (fallback == Fallback::All) {
    if (ncclLoaded) return Server{true, "PEERLINK_NCCL_FALLBACK=ALL"};
    return Failure{ncclSystemError,
                   fmt::format("PEERLINK_NCCL_FALLBACK=ALL hands every communicator to the real NCCL, which is not "
                               "loaded ({}); set PEERLINK_NCCL_LIBRARY to its libnccl.so.2",
                               loadFailure)};
  }
  const bool acrossMachines = launch.localSize && *launch.localSize < launch.size;
  if (!acrossMachines) return Server{false, "one machine"};
  const std::string job =
      fmt::format("{} says {} ranks, {} on this machine", launch.source, launch.size, *launch.localSize);
  if (fallback == Fallback::Auto && ncclLoaded) {
    return Server{
        true, job +
                  ": across machines peerlink's communicator needs MPI, which the NCCL API does not start, so the real "
                  "NCCL serves the job (PEERLINK_NCCL_FALLBACK=AUTO)"};
  }
  return Server{false, fmt::format("{}; the real NCCL is not {} ({}), so peerlink tries", job,
                                   fallback == Fallback::None ? "allowed" : "loaded",
                                   fallback == Fallback::None ? "PEERLINK_NCCL_FALLBACK=NONE" : loadFailure)};
}

std::variant<Server, Failure> chooseRankServer(Fallback fallback, bool peerlinkId, bool ncclLoaded,
                                               const std::string& loadFailure) {
  if (peerlinkId) return Server{false, "a peerlink unique id"};
  const char* what =
      "the unique id is not peerlink's (an id of the real NCCL, made under PEERLINK_NCCL_FALLBACK=ALL or for a job "
      "across machines, or bytes that are no id)";
  if (fallback != Fallback::None && ncclLoaded) return Server{true, what};
  return Failure{ncclInvalidArgument, fmt::format("{}; the real NCCL that would serve it is not {}", what,
                                                  fallback == Fallback::None ? "allowed (PEERLINK_NCCL_FALLBACK=NONE)"
                                                                             : "loaded (" + loadFailure + ")")};
}

}  // namespace peerlink::nccl
