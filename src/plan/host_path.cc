// The names of the ways through host memory (host_path.hpp): the communicator's own (coll::stagedWayName).
#include "plan/host_path.hpp"

#include "coll/planned_calls.hpp"

namespace peerlink::plan {
namespace {

static_assert(static_cast<int>(coll::StagedWay::Lines) == static_cast<int>(HostPath::Lines) &&
                  static_cast<int>(coll::StagedWay::Ring) == static_cast<int>(HostPath::Ring) &&
                  static_cast<int>(coll::StagedWay::Chain) == static_cast<int>(HostPath::Chain) &&
                  static_cast<int>(coll::StagedWay::PlanKernel) == static_cast<int>(HostPath::PlanKernel) &&
                  static_cast<int>(coll::StagedWay::PlanSteps) == static_cast<int>(HostPath::PlanSteps) &&
                  static_cast<int>(coll::StagedWay::PairByPair) == static_cast<int>(HostPath::PairByPair) &&
                  static_cast<std::size_t>(coll::StagedWay::PairByPair) + 1 == kHostPathCount,
              "HostPath is coll::StagedWay's ways the model costs, in its order");

}  // namespace

const char* hostPathName(HostPath path) noexcept {
  return coll::stagedWayName(static_cast<coll::StagedWay>(path));
}

std::optional<HostPath> parseHostPath(const std::string& name) {
  for (std::size_t i = 0; i < kHostPathCount; ++i) {
    if (name == hostPathName(static_cast<HostPath>(i))) return static_cast<HostPath>(i);
  }
  return std::nullopt;
}

std::optional<HostPath> costedHostPath(coll::StagedWay way) noexcept {
  return static_cast<HostPath>(way);
}

}  // namespace peerlink::plan
