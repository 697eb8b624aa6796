// The NCCL API's settings (read once per process from the registry: the C API has no other channel) and the
// decisions made from them: which library serves a new communicator. Pure but for apiSettingsFromEnvironment.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "nccl_api/result.hpp"
#include "peerlink/launch.hpp"
#include "peerlink/params.hpp"

namespace peerlink::nccl {

/// PEERLINK_NCCL_FALLBACK.
enum class Fallback { Auto, None, All };
const char* fallbackName(Fallback fallback) noexcept;  ///< "AUTO", "NONE", "ALL"

/// The deadline both PEERLINK_TIMEOUT_MS and PEERLINK_BOOTSTRAP_TIMEOUT_MS take under the NCCL API when unset:
/// NCCL waits as long as the application does (PyTorch's own watchdog gives up after minutes and aborts, which
/// stops peerlink's waits at once through the abort word).
inline constexpr const char* kApiDeadlineMs = "3600000";

struct ApiSettings {
  Params params;  ///< with the NCCL API's deadlines where the user set none
  Fallback fallback = Fallback::Auto;
  int versionCode = 22809;  ///< PEERLINK_NCCL_VERSION
  std::string library;      ///< PEERLINK_NCCL_LIBRARY (empty: search)
};

/// The settings from `params`, with the NCCL API's deadlines where the user set none.
ApiSettings apiSettingsFrom(Params params);

/// Which library serves a communicator, and why (the INIT log says it once per communicator).
struct Server {
  bool nccl = false;  ///< false: peerlink's communicator
  std::string reason;
};

/// What ncclGetUniqueId makes here, and why (the INIT log says it).
enum class IdKind {
  Peerlink,    ///< a peerlink id: peerlink serves the world
  Nccl,        ///< the real NCCL's id: it serves the world
  Rendezvous,  ///< a peerlink id whose rendezvous root decides by the ranks' hosts (and asks the real NCCL for an id
               ///< when they are several)
};
struct IdChoice {
  IdKind kind = IdKind::Peerlink;
  std::string reason;
};

/// Who serves the world of an id ncclGetUniqueId makes here. The id carries the answer to every rank. AUTO gives
/// the real NCCL a job whose launcher says it spans machines (peerlink's communicator crosses machines only over
/// MPI, which an application of NCCL's API has not started) and peerlink one it says is on this machine; where the
/// launcher does not say (no launcher's variables, or none for the local size: Ray, a Kubeflow job without
/// torchrun), the id is peerlink's and its rendezvous root decides. ALL gives every job to the real NCCL. Without the
/// real library (`ncclLoaded` false, `loadFailure` says why) or under NONE the id is peerlink's, and ALL is a
/// Failure.
std::variant<IdChoice, Failure> chooseIdServer(Fallback fallback, const LaunchEnvironment& launch, bool ncclLoaded,
                                               const std::string& loadFailure);

/// Whether this process can follow a rendezvous root that sends the world to the real NCCL, as its hellos tell the
/// root (BootstrapOptions::forwarding): not under NONE, nor without the real library. The root refuses a world across
/// hosts some rank cannot follow, naming the rank and why.
ForwardAbility forwardAbility(Fallback fallback, bool ncclLoaded);

/// ncclCommInitRankScalable's ids, by whether each is peerlink's: all peerlink's (the ranks meet at the first's root)
/// or all the real NCCL's (its ncclCommInitRankScalable takes them all). A mix -- ids made by processes of different
/// settings -- is a Failure (ncclInvalidArgument) naming the first id that differs from the first.
std::optional<Failure> checkScalableIds(const std::vector<bool>& peerlinkIds);

/// Who serves ncclCommInitRank with an id that is (`peerlinkId`) or is not one of peerlink's. Another id is the
/// real NCCL's: served by it when allowed and loaded, else a Failure (ncclInvalidArgument) saying what to set. A
/// peerlink id whose root may forward is peerlink's here: its rendezvous may still send the world on.
std::variant<Server, Failure> chooseRankServer(Fallback fallback, bool peerlinkId, bool ncclLoaded,
                                               const std::string& loadFailure);

}  // namespace peerlink::nccl
