// One process per GPU, as the model predicts it. Every kernel pays a part for each process beyond the first
// (CostModel::processUs: the processes' graphs do not start their calls together). A call whose kernel touches a
// peer's buffers -- which another process reaches only where they are registered as windows -- takes the way the
// communicator takes for it (communicator.cc; an eager call's buffers shared at the call are not modelled: the plan
// times a graph's calls): as the arena ring where coll::runsAsArenaRing says so under PEERLINK_COLL_ARENA_RING, in
// coll::arenaRingShape's shape (arena_predict.hpp); else through the staging windows, cut as the communicator cuts it
// (coll/staging_plan.hpp): per chunk each rank's copy into its window, the collective between the windows (the kernel
// chosen for the chunk's size), the copy out, in the order the communicator runs them (coll/staging_schedule.hpp,
// timed by staged_time.hpp): by default the copies of one chunk overlap the kernels of its neighbours, under
// PEERLINK_COLL_STAGE_UNREGISTERED=SERIAL (ProcessMode::serialStaging) each chunk's copies and kernel run one after
// another. The LL kernels touch only their own buffers and the peers' arenas: never staged.
// Send/recv groups across processes over NVLink take a path of their own (coll/comm_launch_p2p_staged.hpp) that is
// not modelled: they pay the process part only.
// Where the GPUs reach each other only through host memory (Fabric::throughHost) nothing is staged through windows:
// every call is host_predict.hpp's, plus CostModel::hostProcessUs for each process beyond the first (its own figure:
// the calls' stages are shared memory and their kernels those of one process, but the processes' graphs still start
// them apart); send/recv across processes takes the way the communicator gives it (coll::stagedWayOf: past two ranks'
// exchange, pair by pair through the stages, HostPath::PairByPair).
#pragma once

#include <optional>
#include <vector>

#include "peerlink/params.hpp"
#include "plan/host_path.hpp"
#include "plan/predict.hpp"
#include "plan/staged_time.hpp"

namespace peerlink::plan {

/// Whether `call` running `choice` touches a peer's buffers that are not registered in `mode`: it then runs as the
/// arena ring or through the staging windows (unsharedWayOf says which).
bool isStaged(const Call& call, const CollectiveChoice& choice, const ProcessMode& mode);

/// How such a call runs (communicator.cc's dispatch after the registered windows and the buffers shared at the call,
/// which an eager call alone takes and the model does not time): as the arena ring in `arenaRing`'s shape, or through
/// the staging windows (nullopt).
struct UnsharedWay {
  std::optional<coll::HostRingShape> arenaRing;
};

/// The way the communicator takes for such a call of `call`'s shape on `ranks` ranks in `mode`, its grid capped at
/// `maxBlocks` (ChoiceResources::maxBlocks, the communicator's cap): coll::runsAsArenaRing under `mode.arenaRing`
/// (where the windows exist, as the ring's areas do only beside them), in coll::arenaRingShape's shape.
UnsharedWay unsharedWayOf(const Call& call, int ranks, const ProcessMode& mode, int maxBlocks);

/// PEERLINK_COLL_ARENA_RING of `params`, as the communicator reads it (Error(InvalidInput) for another value).
coll::ArenaRingMode arenaRingModeOf(const Params& params);
/// PEERLINK_COLL_ARENA_RING_SHAPE of `params`, as the communicator reads it: nullopt for AUTO.
std::optional<coll::HostRingShape> arenaRingShapeOf(const Params& params);

/// Whether `params` run staged calls serially (PEERLINK_COLL_STAGE_UNREGISTERED=SERIAL), as the communicator reads it.
bool serialStagingOf(const Params& params);
/// Whether `params` stage only the parts the peers touch (PEERLINK_COLL_STAGE_COPIES=PEERS), as the communicator reads
/// it.
bool stageOwnPartsOf(const Params& params);

/// What a call launches: each kernel, predicted by predictChoice, and the staging copies.
struct CallParts {
  std::vector<Prediction> kernels;  ///< one, or a staged call's chunks in order
  /// Per chunk of a staged call (empty for a call that is not), its copies into and out of the windows: the slowest
  /// rank's bytes, read and written, at the memory's whole bandwidth, in µs; nullopt where no rank copies.
  std::vector<std::optional<double>> copyIn;
  std::vector<std::optional<double>> copyOut;
  bool pipelined = false;  ///< the copies run beside the kernels (coll::stagingSchedule's pipelined form)

  int copies() const;          ///< the copies of every chunk
  double copyBytesUs() const;  ///< their bytes' time, all of them
};

/// The parts of `call` running `choice` (a staged call's chunks run the kernel `context` chooses for their size; a
/// call as the arena ring is its one kernel); through host memory along `hostPath` where given (predictHostPath); a
/// call on unregistered buffers the way `way` says where given (the way a measured call took, as its run recorded
/// it), else unsharedWayOf's.
CallParts callParts(const Call& call, const CollectiveChoice& choice, const Fabric& fabric,
                    const ChoiceContext& context, const ProcessMode& mode, const CostModel& model,
                    std::optional<HostPath> hostPath = std::nullopt, std::optional<UnsharedWay> way = std::nullopt);

/// What each operation of a staged call's parts takes under `model`: each kernel's time with the processes' part of
/// `mode`, each copy its launch and its bytes at the copies' efficiency (CostModel::stagingCopy).
StagedDurations stagedDurations(const CallParts& parts, const ProcessMode& mode, const CostModel& model);

/// The time of `call` running `choice` in `mode`: its kernels' times, each with the processes' part, and for a
/// staged call the staging copies', as the schedule runs them (stagedTime: fixedUs and dataUs are those of the
/// operations on its critical path). The same as predictChoice for one process.
Prediction predictCall(const Call& call, const CollectiveChoice& choice, const Fabric& fabric,
                       const ChoiceContext& context, const ProcessMode& mode, const CostModel& model,
                       std::optional<HostPath> hostPath = std::nullopt, std::optional<UnsharedWay> way = std::nullopt);

}  // namespace peerlink::plan
