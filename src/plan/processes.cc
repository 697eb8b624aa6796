// One process per GPU (processes.hpp).
#include "plan/processes.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "coll/comm_setup.hpp"
#include "coll/staging_plan.hpp"

namespace peerlink::plan {
namespace {

double copiedBytes(const std::optional<coll::StridedCopy>& copy) {
  return copy ? static_cast<double>(copy->rowBytes * copy->rows) : 0.0;
}

// The staging copies of one side (into or out of the windows) of chunk `k`: the slowest rank's, each byte read
// and written through its GPU's memory.
void addCopies(const std::vector<std::vector<coll::StagedChunk>>& plans, std::size_t k, bool in, const Fabric& fabric,
               CallParts& parts) {
  double slowest = -1;
  for (std::size_t r = 0; r < plans.size(); ++r) {
    const coll::StagedChunk& chunk = plans[r][k];
    const double bytes = copiedBytes(in ? chunk.in : chunk.out);
    if (bytes <= 0) continue;
    const double gbps = fabric.resources[static_cast<std::size_t>(fabric.memory[r])].gbps;
    slowest = std::max(slowest, 2 * bytes / (gbps * 1e3));
  }
  if (slowest < 0) return;
  parts.copies += 1;
  parts.copyBytesUs += slowest;
}

}  // namespace

bool isStaged(const Call& call, const CollectiveChoice& choice, const ProcessMode& mode) {
  return mode.processes > 1 && !mode.registered && call.count > 0 && call.collective != Collective::SendRecv &&
         kernelInfo(choice.kernel).flow != DataFlow::ThroughStages;
}

CallParts callParts(const Call& call, const CollectiveChoice& choice, const Fabric& fabric,
                    const ChoiceContext& context, const ProcessMode& mode, const CostModel& model) {
  CallParts parts;
  if (!isStaged(call, choice, mode)) {
    parts.kernels.push_back(predictChoice(call, choice, fabric, model));
    return parts;
  }
  const int ranks = fabric.ranks();
  std::vector<std::vector<coll::StagedChunk>> plans;
  for (int r = 0; r < ranks; ++r) {
    plans.push_back(coll::stagedChunks(call.collective, ranks, r, call.root, call.count, dataTypeSize(call.type),
                                       coll::kStagingWindowBytes));
  }
  for (std::size_t k = 0; k < plans.front().size(); ++k) {
    // Between the windows: the recv region lies apart from the send region, so never in place.
    const Call chunk{call.collective, call.type, plans.front()[k].count, false, call.root};
    addCopies(plans, k, true, fabric, parts);
    parts.kernels.push_back(predictChoice(chunk, choiceFor(chunk, ranks, context), fabric, model));
    addCopies(plans, k, false, fabric, parts);
  }
  return parts;
}

Prediction predictCall(const Call& call, const CollectiveChoice& choice, const Fabric& fabric,
                       const ChoiceContext& context, const ProcessMode& mode, const CostModel& model) {
  const CallParts parts = callParts(call, choice, fabric, context, mode, model);
  const double processUs = model.processUs * (mode.processes - 1);
  if (parts.copies == 0 && parts.kernels.size() == 1) {
    Prediction p = parts.kernels.front();
    if (call.count > 0) {
      p.fixedUs += processUs;
      p.timeUs += processUs;
    }
    return p;
  }
  Prediction p;
  p.algorithm = choice.algorithm;
  p.kernel = choice.kernel;
  const Prediction* longest = &parts.kernels.front();
  for (const Prediction& kernel : parts.kernels) {
    p.fixedUs += kernel.fixedUs + processUs;
    p.dataUs += kernel.dataUs;
    p.steps = std::max(p.steps, kernel.steps);
    if (kernel.dataUs > longest->dataUs) longest = &kernel;
  }
  const double copyDataUs = parts.copyBytesUs / model.stagingCopy.efficiency;
  p.fixedUs += parts.copies * model.stagingCopy.launchUs;
  p.dataUs += copyDataUs;
  p.timeUs = p.fixedUs + p.dataUs;
  const std::string staged =
      fmt::format("through the staging windows: {} chunk(s), {} copies", parts.kernels.size(), parts.copies);
  if (p.fixedUs >= p.dataUs) {
    p.bottleneck = "latency";
    p.phase = "launches, flag waits and copies " + staged;
  } else if (copyDataUs >= p.dataUs - copyDataUs) {
    p.bottleneck = fabric.resources[static_cast<std::size_t>(fabric.memory.front())].name;
    p.phase = "the copies " + staged;
  } else {
    p.bottleneck = longest->bottleneck;
    p.phase = longest->phase + ", " + staged;
  }
  return p;
}

}  // namespace peerlink::plan
