// One process per GPU, as the model predicts it. Every kernel pays a part for each process beyond the first
// (CostModel::processUs: the processes' graphs do not start their calls together). A call whose kernel touches a
// peer's buffers -- which another process reaches only where they are registered as windows -- runs through the
// staging windows, cut as the communicator cuts it (coll/staging_plan.hpp): per chunk each rank's copy into its
// window, the collective between the windows (the kernel chosen for the chunk's size), the copy out, one after
// another on the rank's stream. The LL kernels touch only their own buffers and the peers' arenas: never staged.
// Send/recv groups across processes take a path of their own (coll/comm_launch_p2p_staged.hpp) that is not
// modelled: they pay the process part only.
#pragma once

#include <vector>

#include "plan/predict.hpp"

namespace peerlink::plan {

/// Whether `call` running `choice` goes through the staging windows in `mode`.
bool isStaged(const Call& call, const CollectiveChoice& choice, const ProcessMode& mode);

/// What a call launches: each kernel, predicted by predictChoice, and the staging copies.
struct CallParts {
  std::vector<Prediction> kernels;  ///< one, or a staged call's chunks in order
  int copies = 0;                   ///< staging copies one after another (the busiest rank's, into and out of)
  double copyBytesUs = 0;           ///< their bytes, read and written, at the memory's whole bandwidth
};

/// The parts of `call` running `choice` (a staged call's chunks run the kernel `context` chooses for their size).
CallParts callParts(const Call& call, const CollectiveChoice& choice, const Fabric& fabric,
                    const ChoiceContext& context, const ProcessMode& mode, const CostModel& model);

/// The time of `call` running `choice` in `mode`: its kernels' times, each with the processes' part, and the
/// staging copies' (CostModel::stagingCopy). The same as predictChoice for one process.
Prediction predictCall(const Call& call, const CollectiveChoice& choice, const Fabric& fabric,
                       const ChoiceContext& context, const ProcessMode& mode, const CostModel& model);

}  // namespace peerlink::plan
