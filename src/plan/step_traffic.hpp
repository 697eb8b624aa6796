// What a collective's plan (coll/plan.hpp) puts on each resource of a fabric, step by step: every byte a
// transfer's executor reads from another rank crosses the route from that rank to it, every byte it writes into
// another rank's buffer the route from it to that rank, and local reads and writes load its own memory.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "coll/plan.hpp"
#include "plan/fabric_model.hpp"

namespace peerlink::plan {

/// Bytes one step puts on each resource (indexed as Fabric::resources).
struct StepTraffic {
  std::vector<double> bytes;
  bool copies = false;      ///< the step has copies
  bool reductions = false;  ///< the step has reductions
};

/// The traffic of every step of `plan` over `fabric` (one rank of the plan per rank of the fabric). Bytes between
/// ranks are multiplied by `wireFactor` (a protocol's flags: LL's lines carry 8 payload bytes in 16). A source
/// range one executor reads for several transfers of a step counts once (a kernel reads a shard once and stores
/// it to several ranks). Throws Error(InvalidUsage) when the plan has more ranks than the fabric.
std::vector<StepTraffic> stepTraffic(const coll::Plan& plan, const Fabric& fabric, double wireFactor);

/// "copies", "reductions", "copies and reductions": what a step does, for bottleneck lines.
std::string stepKind(const StepTraffic& step);

}  // namespace peerlink::plan
