// A hierarchical plan's phases (coll/hierarchical_plan.hpp) carried out by one process over a NetWorld: every group
// call that names this rank, in order, on the world's node group (in the node) or rail (across nodes); a send/recv
// phase and the one beside it as one send/recv group. On GPUs the communicator runs the in-node calls with its
// NVLink kernels instead; here, in the CPU proofs of the transport, they go over the transport too, so the whole
// collective runs end to end on host memory.
#pragma once

#include "coll/hierarchical_plan.hpp"
#include "net/net_world.hpp"

namespace peerlink::net {

/// This rank's buffers, at the sizes plan.plan.ranks[rank] declares (the in-place user buffer where the plan says).
struct RankBuffers {
  void* input = nullptr;
  void* output = nullptr;
  void* scratch = nullptr;
};

/// Runs `plan` for this process (world rank r is the plan's rank r: world.grid() must equal plan.grid). Reductions
/// with `op` (groupReduceOp, groupAvgDivisor). Errors are the calls'; Error(InvalidUsage) for a grid that is not the
/// world's.
void runHierarchical(NetWorld& world, const coll::HierarchicalPlan& plan, ReduceOp op, const RankBuffers& buffers);

}  // namespace peerlink::net
