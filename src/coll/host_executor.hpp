// Runs a plan (plan.hpp) over host buffers, step by step, so every algorithm is tested without a GPU.
// Before each step it checks what a GPU would get wrong silently: accesses out of bounds, writes into the
// user's send buffer, and races (an element written by two transfers of the step, or written by one while
// another reads it). A plan that fails a check is a peerlink bug: Error(Internal) names the plan, the step
// and both transfers.
#pragma once

#include <cstddef>
#include <vector>

#include "coll/host_reduce.hpp"
#include "coll/plan.hpp"

namespace peerlink::coll {

/// One rank's buffers, in bytes, at least the element counts of the plan's RankLayout.
struct HostRankBuffers {
  Bytes input;
  Bytes output;
  Bytes scratch;
  Bytes hostStage;
};

/// Every rank's buffers at the sizes the plan declares, every byte `fill`.
std::vector<HostRankBuffers> allocateHostBuffers(const Plan& plan, std::byte fill = std::byte{0});

/// Checks every step of the plan without data (see the header comment); throws Error(Internal).
void checkPlan(const Plan& plan);

/// Checks and runs each step in turn; Reduce transfers use `op` (hostReduce). Throws Error(InvalidUsage)
/// for buffers smaller than the plan declares or an op the plan's type does not support, Error(Internal)
/// for a bad plan.
void executePlan(const Plan& plan, ReduceOp op, std::vector<HostRankBuffers>& buffers);

/// The whole round trip: buffers filled with `poison`, sendData[r] placed at rank r's send range, the plan
/// run, and each rank's recv range returned (empty where the collective has none), to compare with
/// hostReduceReference.
std::vector<Bytes> runPlanOnHost(const Plan& plan, ReduceOp op, const std::vector<Bytes>& sendData,
                                 std::byte poison = std::byte{0xa5});

}  // namespace peerlink::coll
