#include "nccl_api/settings.hpp"

#include <algorithm>

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

std::variant<IdChoice, Failure> chooseIdServer(Fallback fallback, const LaunchEnvironment& launch, bool ncclLoaded,
                                               const std::string& loadFailure) {
  if (fallback == Fallback::All) {
    if (ncclLoaded) return IdChoice{IdKind::Nccl, "PEERLINK_NCCL_FALLBACK=ALL"};
    return Failure{ncclSystemError,
                   fmt::format("PEERLINK_NCCL_FALLBACK=ALL hands every communicator to the real NCCL, which is not "
                               "loaded ({}); set PEERLINK_NCCL_LIBRARY to its libnccl.so.2",
                               loadFailure)};
  }
  const bool forwardable = fallback == Fallback::Auto && ncclLoaded;
  const bool none = fallback == Fallback::None;
  const std::string unable = fmt::format("the real NCCL is not {} ({})", none ? "allowed" : "loaded",
                                         none ? "PEERLINK_NCCL_FALLBACK=NONE" : loadFailure);
  // A launcher's job of one process cannot span machines, whatever it says of local sizes.
  const bool oneProcess = launch.launcher != Launcher::None && launch.size == 1;
  if (!launch.localSize && !oneProcess) {
    const std::string job =
        launch.launcher == Launcher::None
            ? std::string("no launcher says whether the job spans machines")
            : fmt::format("{} says {} ranks but not how many are on this machine", launch.source, launch.size);
    if (forwardable) {
      return IdChoice{IdKind::Rendezvous, job +
                                              ": the rendezvous decides by the ranks' hosts (one: peerlink, "
                                              "several: the real NCCL, whose id its root then asks for)"};
    }
    return IdChoice{IdKind::Peerlink, fmt::format("{}; {}, so peerlink serves it (across machines its creation "
                                                  "fails)",
                                                  job, unable)};
  }
  const bool acrossMachines = launch.localSize && *launch.localSize < launch.size;
  if (!acrossMachines) return IdChoice{IdKind::Peerlink, "one machine"};
  const std::string job =
      fmt::format("{} says {} ranks, {} on this machine", launch.source, launch.size, *launch.localSize);
  if (forwardable) {
    return IdChoice{
        IdKind::Nccl,
        job +
            ": across machines peerlink's communicator needs MPI, which the NCCL API does not start, so the real "
            "NCCL serves the job (PEERLINK_NCCL_FALLBACK=AUTO)"};
  }
  return IdChoice{IdKind::Peerlink, fmt::format("{}; {}, so peerlink tries", job, unable)};
}

ForwardAbility forwardAbility(Fallback fallback, bool ncclLoaded) {
  if (fallback == Fallback::None) return ForwardAbility::FallbackNone;
  return ncclLoaded ? ForwardAbility::Able : ForwardAbility::NoRealNccl;
}

std::optional<Failure> checkScalableIds(const std::vector<bool>& peerlinkIds) {
  const auto other = std::find(peerlinkIds.begin(), peerlinkIds.end(), !peerlinkIds.front());
  if (other == peerlinkIds.end()) return std::nullopt;
  const auto kind = [](bool peerlink) { return peerlink ? "peerlink's" : "not peerlink's (the real NCCL's)"; };
  return Failure{ncclInvalidArgument,
                 fmt::format("unique id 0 is {}, unique id {} is {}: the ids were made by processes of different "
                             "settings; make every id in processes with the same PEERLINK_NCCL_FALLBACK and launcher",
                             kind(peerlinkIds.front()), other - peerlinkIds.begin(), kind(!peerlinkIds.front()))};
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
