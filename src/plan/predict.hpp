// Predicted collective times within one machine: the plan of the kernel a call runs (coll/plan.hpp) scored over
// the fabric's resources (fabric_model.hpp), step by step, with the kernel's costs from the model (cost_model.hpp).
//
// The model. A step of a plan takes as long as its busiest resource needs for the bytes the step puts on it at the
// resource's bandwidth (flows crossing one resource divide it). A kernel between barriers runs its steps one after
// another, each synchronized step beyond the first costing CostModel::stepUs; a pipelined kernel (the rings) runs
// its steps' chunks side by side, so its busiest resource over the whole plan sets the pace, plus the pipeline's
// fill; LL and LL128 kernels wait on flags in the data, one step whatever the plan. The bytes' time is divided by
// the kernel's efficiency, and its fixed cost added: its launch and a part for each peer:
//   time = launch + peerUs * (ranks - 1) + stepUs * (synchronized steps - 1) + data time / efficiency.
// Times are for calls in a CUDA graph (`peerlink coll`'s peerlink_graph); eager calls add the host's launch.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "coll/arena_ring.hpp"
#include "peerlink/collective_choice.hpp"
#include "peerlink/collectives.hpp"
#include "peerlink/params.hpp"
#include "peerlink/topology.hpp"
#include "plan/cost_model.hpp"
#include "plan/fabric_model.hpp"

namespace peerlink::plan {

/// One collective call, as the API makes it (communicator.hpp's count).
struct Call {
  Collective collective = Collective::AllReduce;
  DataType type = DataType::F32;
  std::size_t count = 0;
  bool inPlace = false;
  int root = 0;
};

/// How the ranks' calls are made (processes.hpp says what one process per GPU costs).
struct ProcessMode {
  int processes = 1;        ///< processes driving the ranks (1: one drives every GPU)
  bool registered = false;  ///< the callers' buffers are registered as windows: no call is staged
  /// A staged call's copies and kernels one after another (PEERLINK_COLL_STAGE_UNREGISTERED=SERIAL), not pipelined.
  bool serialStaging = false;
  /// A staged call copies only the parts of each rank's buffers its peers touch (PEERLINK_COLL_STAGE_COPIES=PEERS,
  /// coll::keepOwnPartsLocal), not every byte.
  bool stageOwnParts = true;
  std::size_t stagingWindowBytes = std::size_t{128} << 20;  ///< PEERLINK_COLL_STAGING_WINDOW (its default)
  /// Which such calls run as the arena ring instead of through the windows (PEERLINK_COLL_ARENA_RING), and in what
  /// shape where one is set (PEERLINK_COLL_ARENA_RING_SHAPE; nullopt: AUTO, coll::arenaRingShape's per call).
  coll::ArenaRingMode arenaRing = coll::ArenaRingMode::Auto;
  std::optional<coll::HostRingShape> arenaRingShape{};
};

/// A predicted time and what bounds it.
struct Prediction {
  Algorithm algorithm = Algorithm::OneShot;
  Kernel kernel = Kernel::Copy;
  double timeUs = 0;
  double fixedUs = 0;  ///< launch, the peers' part and synchronized steps
  double dataUs = 0;   ///< the bytes, at the kernel's efficiency
  int steps = 0;       ///< synchronized steps
  /// The resource that bounds the data's time ("GPU 0 NVLink out"), or "latency" where the fixed costs are the
  /// larger part, or "nothing to move".
  std::string bottleneck;
  /// Where: "step 1 of 2 (reductions)", "the pipeline of 7 steps", or the fixed costs' parts.
  std::string phase;
  /// The way through host memory that runs the call, where the GPUs reach each other only so (Fabric::throughHost,
  /// host_predict.hpp); `kernel` means nothing then.
  std::optional<HostPath> hostPath;
  /// The way of the arena ring that runs the call, where it takes the arena ring (one process per GPU, its buffers
  /// not registered: arena_predict.hpp); `kernel` is then the kernel the call would run on registered windows.
  std::optional<ArenaWay> arenaWay;
  /// The arena ring's slots each block moves (in whole slots' worth of data: CostModel::arenaSlotUs each).
  double arenaSlots = 0;
};

/// The time of `call` over the ranks of `fabric` when it runs `choice`'s kernel.
Prediction predictChoice(const Call& call, const CollectiveChoice& choice, const Fabric& fabric,
                         const CostModel& model);

/// What the choice needs to know of a communicator, besides the call.
struct ChoiceContext {
  CollectiveFabric fabric;
  ChoiceResources resources;
  ChoiceSettings settings;
  HostSettings host;  ///< where the calls go through host memory (Fabric::throughHost)
};

/// What a communicator over the GPUs `devices` (CUDA ordinals, a rank each) of `topology` would choose with:
/// fabricOf, communicatorResources and the settings of `params`, as `peerlink coll --explain` takes them, and the
/// settings of calls through host memory (hostSettingsOf: Error(InvalidUsage) for a PEERLINK_COLL_HOST_STAGED that
/// names no pairs of these ranks).
ChoiceContext choiceContextFor(const Topology& topology, const std::vector<int>& devices, const Params& params);

/// One algorithm peerlink could run for a call, and its predicted times.
struct Candidate {
  CollectiveChoice choice;  ///< out of place
  Prediction outOfPlace;
  std::optional<Prediction> inPlace;  ///< where the collective has an in-place form
  bool chosen = false;                ///< what the communicator runs (PEERLINK_ALGO as set)
};

/// What the communicator over `ranks` ranks runs for `call`: chooseCollective for 16-byte aligned buffers, with
/// PEERLINK_ALGO as `forced` where that is not Auto, else as the settings say.
CollectiveChoice choiceFor(const Call& call, int ranks, const ChoiceContext& context,
                           Algorithm forced = Algorithm::Auto);

/// The time of the kernel the communicator chooses for `call`, its calls made as `mode` says (processes.hpp).
Prediction predictChosen(const Call& call, const Fabric& fabric, const ChoiceContext& context, const CostModel& model,
                         const ProcessMode& mode = {});

/// Every algorithm of the call's collective (algorithmsOf), as chooseCollective would run it when forced, and the
/// one it runs as the settings are: the chosen first, then the others, each once (through host memory: the one way
/// the communicator runs the call). `call.inPlace` is ignored:
/// both placements are predicted where the collective has both, the calls made as `mode` says (processes.hpp).
std::vector<Candidate> candidatesFor(const Call& call, const Fabric& fabric, const ChoiceContext& context,
                                     const CostModel& model, const ProcessMode& mode = {});

/// Whether `collective` runs in place (not all-to-all and send/recv).
bool hasInPlaceForm(Collective collective) noexcept;

}  // namespace peerlink::plan
