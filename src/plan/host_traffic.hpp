// Which way a call of a communicator through host memory runs (host_path.hpp), as the communicator decides it
// (coll/comm_launch_plan.hpp: LL lines, the host ring, or the staged plans, as one kernel a rank or step by step), and
// the bytes it puts on each GPU's PCIe link to and from the host, read from the code that moves them:
// - LL lines: every rank stores its message for each peer into that peer's LL area (16-byte lines of 8 payload
//   bytes: twice the message crosses the link) and reads its own area's lines from the peers (a broadcast's root only
//   stores, a reduce's root only reads);
// - the host ring: each hop a rank's store of a slot into its own ring area (out) and the next rank's load of it
//   (in); the rounds move 2(n-1) shards an all-reduce, n-1 blocks an all-gather or reduce-scatter, each way on every
//   rank; the chain moves the whole buffer out of the root and every rank before the last, into every rank after it;
// - the staged plans (coll::stagedSegments, coll::stagedPieces): per step, every copy or reduction into a host stage
//   out of its executor's GPU, every read of a host stage into it, a direct hop over the pair's route (fabric_model),
//   local reads and writes through the GPU's memory;
// - send/recv pair by pair across processes (coll/staged_p2p.hpp): each rank copies its message chunk by chunk into
//   its stage (out) and the peer's chunks out of the peer's stage (in), every copy on the rank's one stream: its sends'
//   bytes out, then its receives' in, one after the other (two steps of the traffic, no barrier between them).
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "coll/host_ring_call.hpp"
#include "peerlink/params.hpp"
#include "plan/fabric_model.hpp"
#include "plan/host_path.hpp"
#include "plan/predict.hpp"

namespace peerlink::plan {

/// The settings of `params` for `ranks` ranks, as the communicator reads them. Throws Error(InvalidUsage) for a
/// PEERLINK_COLL_HOST_STAGED that names no pairs of those ranks and Error(InvalidInput) for a host ring shape that
/// is not one, as the communicator does.
HostSettings hostSettingsOf(const Params& params, int ranks);

/// The way `call` runs on `ranks` ranks whose communicator has staged plans, in one process or, `acrossProcesses`, in
/// one a rank (coll::stagedWayOf: send/recv then goes rank by rank).
HostPath hostPathOf(const Call& call, int ranks, const HostSettings& settings, bool acrossProcesses = false);

/// The host ring's grid and slot a call of `collective` takes: PEERLINK_COLL_HOST_RING_SHAPE's, or the
/// collective's own (coll::hostRingShape).
coll::HostRingShape hostRingShapeOf(Collective collective, const HostSettings& settings);

/// Bytes on each resource of a fabric (indexed as Fabric::resources) in one synchronized step.
using ResourceBytes = std::vector<double>;

/// What a call puts on the fabric: one entry for a kernel without steps (LL lines, the host ring), one per step of
/// the staged plans, every segment's in turn.
struct HostTraffic {
  HostPath path = HostPath::Lines;
  std::vector<ResourceBytes> steps;
  /// The host ring's pipeline fill: what one grain (blocks x slot) puts on the busiest link, times the hops before
  /// the last rank receives its first slot (0 for the rounds and for a chain of 2 ranks).
  double fillBytes = 0;
  std::size_t slotBytes = 0;  ///< the host ring's slot (0 otherwise)
  int blocks = 0;             ///< the host ring's grid
};

/// The traffic of `call` on `fabric`, whose ranks reach each other through host memory (Fabric::throughHost), along
/// `path` where given (the way a measured call took, as its run recorded it), else hostPathOf's.
HostTraffic hostTraffic(const Call& call, const Fabric& fabric, const HostSettings& settings,
                        std::optional<HostPath> path = std::nullopt);

}  // namespace peerlink::plan
