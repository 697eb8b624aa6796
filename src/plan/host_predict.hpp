// Predicted times of calls through host memory (host_traffic.hpp says which way a call runs and what it moves): the
// busiest GPU link to or from the host sets a kernel's pace, as a plan's busiest resource does (predict.hpp).
//   LL lines, the host ring:  time = launch + (busiest link's bytes + the chain's fill) / (its rate x efficiency)
//   staged plans:             time = launch + host_step_us x (steps - 1) + Σ over steps busiest link / (rate x eff.)
// The host ring has no step barrier: its blocks wait slot by slot, so both ways of each link carry data at once and
// the whole call is one pipeline. The staged plans' steps each end at a barrier of every rank (plan_barrier.cu).
// A call of several processes costs what it costs in one: the stages are shared memory there, the kernels the same.
#pragma once

#include "plan/cost_model.hpp"
#include "plan/fabric_model.hpp"
#include "plan/host_path.hpp"
#include "plan/predict.hpp"

namespace peerlink::plan {

/// The time of `call` on `fabric` (Fabric::throughHost) with the communicator's `settings`, along `path` where given
/// (hostTraffic).
Prediction predictHostPath(const Call& call, const Fabric& fabric, const HostSettings& settings, const CostModel& model,
                           std::optional<HostPath> path = std::nullopt);

/// "LL lines through host memory", "the host ring's rounds through pinned host memory (32 blocks x 64 KiB slots)",
/// ...: what the communicator runs for `call` along `path`, for the plan's rows.
std::string describeHostPath(const Call& call, HostPath path, const HostSettings& settings);

}  // namespace peerlink::plan
