#include "plan/predict.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "coll/choice_rules.hpp"
#include "coll/plan.hpp"
#include "plan/host_traffic.hpp"
#include "plan/processes.hpp"
#include "plan/step_traffic.hpp"

namespace peerlink::plan {
namespace {

// LL's 16-byte line carries 8 payload bytes (ll_line.cuh); LL128's 128-byte line 120 (coll_ll128.cu).
constexpr double kLlWire = 2.0;
constexpr double kLl128Wire = 128.0 / 120.0;
// A ring kernel's blocks move about this much per round together (their chunks side by side): the grain of the
// pipeline whose fill the first and last rounds pay.
constexpr double kPipelineGrainBytes = 1 << 20;

double wireFactor(Protocol protocol) {
  switch (protocol) {
    case Protocol::Ll: return kLlWire;
    case Protocol::Ll128: return kLl128Wire;
    default: return 1.0;
  }
}

bool pipelined(Kernel kernel) {
  switch (kernel) {
    case Kernel::RingBroadcast:
    case Kernel::RingReduce:
    case Kernel::RingAllReduce:
    case Kernel::RingReduceScatter:
    case Kernel::CeRingAllReduce: return true;
    default: return false;
  }
}

// The plan of the data the kernel moves. LL kernels stage in place calls through their scratch themselves, so
// their links carry what an out-of-place plan moves.
coll::Plan planOf(const Call& call, const CollectiveChoice& choice, int ranks) {
  const bool inPlace = call.inPlace && choice.protocol == Protocol::Simple;
  return coll::buildPlan(call.collective, choice.algorithm, ranks, call.count, call.root, inPlace, 0, call.type,
                         choice.kernel == Kernel::PushReduce);
}

// Microseconds for `bytes` at `gbps` GB/s.
double microseconds(double bytes, double gbps) {
  return bytes / (gbps * 1e3);
}

struct Busiest {
  double us = 0;
  int resource = -1;
};

Busiest busiest(const std::vector<double>& bytes, const Fabric& fabric) {
  Busiest most;
  for (std::size_t r = 0; r < bytes.size(); ++r) {
    const double us = microseconds(bytes[r], fabric.resources[r].gbps);
    if (us > most.us) most = {us, static_cast<int>(r)};
  }
  return most;
}

}  // namespace

bool hasInPlaceForm(Collective collective) noexcept {
  return collective != Collective::AllToAll && collective != Collective::SendRecv;
}

Prediction predictChoice(const Call& call, const CollectiveChoice& choice, const Fabric& fabric,
                         const CostModel& model) {
  const KernelCost& cost = model.cost(choice.kernel, call.collective);
  Prediction p;
  p.algorithm = choice.algorithm;
  p.kernel = choice.kernel;
  if (call.count == 0) {
    p.bottleneck = "nothing to move";
    p.phase = "a call of 0 elements returns at once";
    return p;
  }
  const coll::Plan plan = planOf(call, choice, fabric.ranks());
  const std::vector<StepTraffic> steps = stepTraffic(plan, fabric, wireFactor(choice.protocol));
  const bool barrierless = choice.protocol != Protocol::Simple;
  const int stepCount = static_cast<int>(steps.size());
  p.steps = barrierless || pipelined(choice.kernel) ? 1 : std::max(stepCount, 1);

  double sequential = 0;  // every step after the one before
  Busiest slowest;
  int slowestStep = -1;
  for (int s = 0; s < stepCount; ++s) {
    const Busiest step = busiest(steps[static_cast<std::size_t>(s)].bytes, fabric);
    sequential += step.us;
    if (step.us > slowest.us) {
      slowest = step;
      slowestStep = s;
    }
  }
  double data = sequential;
  Busiest bound = slowest;
  if (pipelined(choice.kernel) && stepCount > 1) {
    std::vector<double> whole(fabric.resources.size(), 0.0);
    for (const StepTraffic& step : steps) {
      for (std::size_t r = 0; r < whole.size(); ++r) whole[r] += step.bytes[r];
    }
    bound = busiest(whole, fabric);
    const double grains =
        std::max(1.0, static_cast<double>(call.count * dataTypeSize(call.type)) / kPipelineGrainBytes);
    data = bound.us + (sequential - bound.us) / grains;
    p.phase = fmt::format("the pipeline of {} steps", stepCount);
  } else if (slowestStep >= 0) {
    p.phase = fmt::format("step {} of {} ({})", slowestStep + 1, stepCount,
                          stepKind(steps[static_cast<std::size_t>(slowestStep)]));
  }
  p.dataUs = data / cost.efficiency;
  p.fixedUs = model.launchOf(cost, fabric.ranks()) + model.stepUs * (p.steps - 1);
  p.timeUs = p.fixedUs + p.dataUs;
  if (p.fixedUs >= p.dataUs || bound.resource < 0) {
    p.bottleneck = "latency";
    p.phase = p.steps > 1 ? fmt::format("launch and {} synchronized steps", p.steps) : "launch and one flag wait";
  } else {
    p.bottleneck = fabric.resources[static_cast<std::size_t>(bound.resource)].name;
  }
  return p;
}

ChoiceContext choiceContextFor(const Topology& topology, const std::vector<int>& devices, const Params& params) {
  return {fabricOf(topology, devices), communicatorResources(topology, devices, params), choiceSettingsFrom(params),
          hostSettingsOf(params, static_cast<int>(devices.size()))};
}

CollectiveChoice choiceFor(const Call& call, int ranks, const ChoiceContext& context, Algorithm forced) {
  CallShape shape;
  shape.collective = call.collective;
  shape.bytes = call.count * dataTypeSize(call.type);
  shape.nranks = ranks;
  shape.inPlace = call.inPlace ? Fact::Yes : Fact::No;
  shape.aligned = Fact::Yes;
  ChoiceSettings settings = context.settings;
  if (forced != Algorithm::Auto) settings.forced = forced;
  return chooseCollective(shape, context.fabric, context.resources, settings);
}

Prediction predictChosen(const Call& call, const Fabric& fabric, const ChoiceContext& context, const CostModel& model,
                         const ProcessMode& mode) {
  return predictCall(call, choiceFor(call, fabric.ranks(), context), fabric, context, mode, model);
}

std::vector<Candidate> candidatesFor(const Call& call, const Fabric& fabric, const ChoiceContext& context,
                                     const CostModel& model, const ProcessMode& mode) {
  std::vector<Algorithm> order = {Algorithm::Auto};
  for (const Algorithm algorithm : coll::algorithmsOf(call.collective)) order.push_back(algorithm);
  Call outOfPlace = call;
  outOfPlace.inPlace = false;
  Call inPlace = call;
  inPlace.inPlace = true;

  std::vector<Candidate> candidates;
  if (fabric.throughHost) {
    // No algorithm to choose: the communicator runs every call through host memory one way (host_traffic.hpp).
    Candidate candidate;
    candidate.choice = choiceFor(outOfPlace, fabric.ranks(), context);
    candidate.chosen = true;
    candidate.outOfPlace = predictCall(outOfPlace, candidate.choice, fabric, context, mode, model);
    if (hasInPlaceForm(call.collective)) {
      candidate.inPlace = predictCall(inPlace, candidate.choice, fabric, context, mode, model);
    }
    candidates.push_back(std::move(candidate));
    return candidates;
  }
  for (const Algorithm forced : order) {
    Candidate candidate;
    candidate.choice = choiceFor(outOfPlace, fabric.ranks(), context, forced);
    candidate.chosen = forced == Algorithm::Auto;
    const bool seen = std::any_of(candidates.begin(), candidates.end(), [&](const Candidate& other) {
      return other.choice.algorithm == candidate.choice.algorithm && other.choice.kernel == candidate.choice.kernel;
    });
    if (seen) continue;
    candidate.outOfPlace = predictCall(outOfPlace, candidate.choice, fabric, context, mode, model);
    // As the arena ring every kernel that touches a peer's buffers is the same one call (processes.hpp): once.
    const bool sameRing = candidate.outOfPlace.arenaWay &&
                          std::any_of(candidates.begin(), candidates.end(),
                                      [](const Candidate& other) { return other.outOfPlace.arenaWay.has_value(); });
    if (sameRing) continue;
    if (hasInPlaceForm(call.collective)) {
      candidate.inPlace =
          predictCall(inPlace, choiceFor(inPlace, fabric.ranks(), context, forced), fabric, context, mode, model);
    }
    candidates.push_back(std::move(candidate));
  }
  return candidates;
}

}  // namespace peerlink::plan
