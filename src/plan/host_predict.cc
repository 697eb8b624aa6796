// A call's predicted time through host memory (host_predict.hpp).
#include "plan/host_predict.hpp"

#include <fmt/format.h>

#include "coll/host_ring_call.hpp"
#include "plan/host_traffic.hpp"

namespace peerlink::plan {
namespace {

struct Busiest {
  double us = 0;
  int resource = -1;
};

Busiest busiest(const ResourceBytes& bytes, const Fabric& fabric) {
  Busiest most;
  for (std::size_t r = 0; r < bytes.size(); ++r) {
    const double us = bytes[r] / (fabric.resources[r].gbps * 1e3);
    if (us > most.us) most = {us, static_cast<int>(r)};
  }
  return most;
}

bool ringCollective(Collective collective) {
  return collective != Collective::AllToAll && collective != Collective::SendRecv;
}

}  // namespace

std::string describeHostPath(const Call& call, HostPath path, const HostSettings& settings) {
  switch (path) {
    case HostPath::Lines: return "LL lines through host memory";
    case HostPath::Ring:
    case HostPath::Chain: {
      const coll::HostRingShape shape = hostRingShapeOf(call.collective, settings);
      return fmt::format("the host ring's {} through pinned host memory ({} blocks x {} KiB slots)",
                         path == HostPath::Chain ? "chain" : "rounds", shape.blocks, shape.slotBytes >> 10);
    }
    case HostPath::PlanKernel: return "the staged plans as one kernel a rank, through the host stages";
    case HostPath::PlanSteps: return "the staged plans step by step on the copy engines, through the host stages";
    case HostPath::PairByPair:
      return "the pairs' copies through the senders' host stages, each rank's sends then receives";
  }
  return "";
}

Prediction predictHostPath(const Call& call, const Fabric& fabric, const HostSettings& settings, const CostModel& model,
                           std::optional<HostPath> path) {
  Prediction p;
  p.algorithm = ringCollective(call.collective) ? Algorithm::Ring : Algorithm::OneShot;
  if (call.count == 0) {
    p.bottleneck = "nothing to move";
    p.phase = "a call of 0 elements returns at once";
    return p;
  }
  const HostTraffic traffic = hostTraffic(call, fabric, settings, path);
  p.hostPath = traffic.path;
  if (traffic.path == HostPath::Lines) p.algorithm = Algorithm::OneShot;  // one LL kernel a rank, to every peer
  const KernelCost& cost = model.cost(traffic.path, call.collective);
  const bool stepped = traffic.path == HostPath::PlanKernel || traffic.path == HostPath::PlanSteps;
  const int stepCount = static_cast<int>(traffic.steps.size());
  p.steps = stepped ? std::max(stepCount, 1) : 1;

  double data = 0;
  Busiest slowest;
  int slowestStep = -1;
  for (int s = 0; s < stepCount; ++s) {
    const Busiest step = busiest(traffic.steps[static_cast<std::size_t>(s)], fabric);
    data += step.us;
    if (step.us > slowest.us) {
      slowest = step;
      slowestStep = s;
    }
  }
  if (slowest.resource >= 0 && traffic.fillBytes > 0) {
    data += traffic.fillBytes / (fabric.resources[static_cast<std::size_t>(slowest.resource)].gbps * 1e3);
  }
  p.dataUs = data / cost.efficiency;
  p.fixedUs = cost.launchUs + model.hostStepUs * (p.steps - 1);
  p.timeUs = p.fixedUs + p.dataUs;
  const std::string how = describeHostPath(call, traffic.path, settings);
  if (p.fixedUs >= p.dataUs || slowest.resource < 0) {
    p.bottleneck = "latency";
    p.phase = stepped ? fmt::format("launch and {} steps of {}", p.steps, how) : "launch and slot waits of " + how;
  } else {
    p.bottleneck = fabric.resources[static_cast<std::size_t>(slowest.resource)].name;
    p.phase = stepped ? fmt::format("step {} of {} of {}", slowestStep + 1, stepCount, how) : how;
  }
  return p;
}

}  // namespace peerlink::plan
