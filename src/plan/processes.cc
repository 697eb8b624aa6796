// One process per GPU (processes.hpp).
#include "plan/processes.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "coll/comm_setup.hpp"
#include "coll/staging_plan.hpp"
#include "plan/arena_predict.hpp"
#include "plan/host_predict.hpp"
#include "plan/host_traffic.hpp"

namespace peerlink::plan {
namespace {

double copiedBytes(const std::vector<coll::StridedCopy>& copies) {
  double bytes = 0;
  for (const coll::StridedCopy& copy : copies) bytes += static_cast<double>(copy.rowBytes * copy.rows);
  return bytes;
}

// The staging copies of one side (into or out of the windows) of chunk `k`: the slowest rank's, each byte read
// and written through its GPU's memory; nullopt where no rank copies.
std::optional<double> copiesOf(const std::vector<std::vector<coll::StagedChunk>>& plans, std::size_t k, bool in,
                               const Fabric& fabric) {
  std::optional<double> slowest;
  for (std::size_t r = 0; r < plans.size(); ++r) {
    const coll::StagedChunk& chunk = plans[r][k];
    const double bytes = copiedBytes(in ? chunk.in : chunk.out);
    if (bytes <= 0) continue;
    const double gbps = fabric.resources[static_cast<std::size_t>(fabric.memory[r])].gbps;
    slowest = std::max(slowest.value_or(0.0), 2 * bytes / (gbps * 1e3));
  }
  return slowest;
}

int present(const std::vector<std::optional<double>>& copies) {
  return static_cast<int>(
      std::count_if(copies.begin(), copies.end(), [](const auto& copy) { return copy.has_value(); }));
}

double sum(const std::vector<std::optional<double>>& copies) {
  double total = 0;
  for (const std::optional<double>& copy : copies) total += copy.value_or(0.0);
  return total;
}

}  // namespace

bool serialStagingOf(const Params& params) {
  return params.getString("PEERLINK_COLL_STAGE_UNREGISTERED") == "SERIAL";
}

int CallParts::copies() const {
  return present(copyIn) + present(copyOut);
}

double CallParts::copyBytesUs() const {
  return sum(copyIn) + sum(copyOut);
}

bool stageOwnPartsOf(const Params& params) {
  return params.getString("PEERLINK_COLL_STAGE_COPIES") == "PEERS";
}

bool isStaged(const Call& call, const CollectiveChoice& choice, const ProcessMode& mode) {
  return mode.processes > 1 && !mode.registered && call.count > 0 && call.collective != Collective::SendRecv &&
         kernelInfo(choice.kernel).flow != DataFlow::ThroughStages;
}

UnsharedWay unsharedWayOf(const Call& call, int ranks, const ProcessMode& mode, int maxBlocks) {
  // The ring's areas lie in the arenas beside the windows (coll::symmetricLayout): none without windows.
  if (mode.stagingWindowBytes == 0 ||
      !coll::runsAsArenaRing(call.collective, call.count, call.type, ranks, mode.arenaRing)) {
    return {};
  }
  return {coll::arenaRingShape(coll::hostRingCallBytes(call.collective, call.count, call.type, ranks),
                               mode.arenaRingShape, maxBlocks)};
}

coll::ArenaRingMode arenaRingModeOf(const Params& params) {
  return coll::arenaRingModeNamed(params.getString("PEERLINK_COLL_ARENA_RING"));
}

std::optional<coll::HostRingShape> arenaRingShapeOf(const Params& params) {
  return coll::arenaRingShapeNamed(params.getString("PEERLINK_COLL_ARENA_RING_SHAPE"));
}

CallParts callParts(const Call& call, const CollectiveChoice& choice, const Fabric& fabric,
                    const ChoiceContext& context, const ProcessMode& mode, const CostModel& model,
                    std::optional<HostPath> hostPath, std::optional<UnsharedWay> way) {
  CallParts parts;
  if (fabric.throughHost) {
    // Where no run recorded the way: the communicator's, which for send/recv across processes goes rank by rank.
    const HostPath path = hostPath ? *hostPath : hostPathOf(call, fabric.ranks(), context.host, mode.processes > 1);
    parts.kernels.push_back(predictHostPath(call, fabric, context.host, model, path));
    return parts;
  }
  if (!isStaged(call, choice, mode)) {
    parts.kernels.push_back(predictChoice(call, choice, fabric, model));
    return parts;
  }
  const int ranks = fabric.ranks();
  const UnsharedWay unshared = way ? *way : unsharedWayOf(call, ranks, mode, context.resources.maxBlocks);
  if (unshared.arenaRing) {
    parts.kernels.push_back(predictArenaRing(call, choice.kernel, *unshared.arenaRing, fabric, model));
    return parts;
  }
  std::vector<std::vector<coll::StagedChunk>> plans;
  for (int r = 0; r < ranks; ++r) {
    plans.push_back(coll::stagedChunks(call.collective, ranks, r, call.root, call.count, dataTypeSize(call.type),
                                       mode.stagingWindowBytes));
  }
  for (std::size_t k = 0; k < plans.front().size(); ++k) {
    // Between the windows: the recv region lies apart from the send region, so never in place.
    const Call chunk{call.collective, call.type, plans.front()[k].count, false, call.root};
    const CollectiveChoice chunkChoice = choiceFor(chunk, ranks, context);
    if (mode.stageOwnParts) {
      for (int r = 0; r < ranks; ++r) {
        coll::keepOwnPartsLocal(plans[static_cast<std::size_t>(r)][k], call.collective, chunkChoice.kernel,
                                chunkChoice.algorithm, ranks, r, call.root, call.count, dataTypeSize(call.type));
      }
    }
    parts.copyIn.push_back(copiesOf(plans, k, true, fabric));
    parts.kernels.push_back(predictChoice(chunk, chunkChoice, fabric, model));
    parts.copyOut.push_back(copiesOf(plans, k, false, fabric));
  }
  parts.pipelined = !mode.serialStaging;
  return parts;
}

StagedDurations stagedDurations(const CallParts& parts, const ProcessMode& mode, const CostModel& model) {
  const double processUs = model.processUs * (mode.processes - 1);
  const auto copy = [&](const std::optional<double>& bytesUs) -> std::optional<double> {
    if (!bytesUs) return std::nullopt;
    return model.stagingCopy.launchUs + *bytesUs / model.stagingCopy.efficiency;
  };
  StagedDurations durations;
  for (std::size_t k = 0; k < parts.kernels.size(); ++k) {
    const bool staged = k < parts.copyIn.size();
    durations.copyIn.push_back(staged ? copy(parts.copyIn[k]) : std::nullopt);
    durations.kernel.push_back(parts.kernels[k].timeUs + processUs);
    durations.copyOut.push_back(staged ? copy(parts.copyOut[k]) : std::nullopt);
  }
  return durations;
}

Prediction predictCall(const Call& call, const CollectiveChoice& choice, const Fabric& fabric,
                       const ChoiceContext& context, const ProcessMode& mode, const CostModel& model,
                       std::optional<HostPath> hostPath, std::optional<UnsharedWay> way) {
  const CallParts parts = callParts(call, choice, fabric, context, mode, model, hostPath, way);
  // Through host memory the stages are shared memory and the kernels those of one process, but the processes' graphs
  // still start their calls apart: host_process_us a process beyond the first, once a call.
  const double processUs = (fabric.throughHost ? model.hostProcessUs : model.processUs) * (mode.processes - 1);
  if (parts.copyIn.empty()) {
    Prediction p = parts.kernels.front();
    if (call.count > 0) {
      p.fixedUs += processUs;
      p.timeUs += processUs;
    }
    return p;
  }
  // The operations on the schedule's critical path make the time: their fixed costs and their bytes' times.
  const StagedTime time = stagedTime(stagedDurations(parts, mode, model), parts.pipelined);
  Prediction p;
  p.algorithm = choice.algorithm;
  p.kernel = choice.kernel;
  const Prediction* longest = nullptr;
  double copyDataUs = 0;
  for (std::size_t k = 0; k < parts.kernels.size(); ++k) {
    const Prediction& kernel = parts.kernels[k];
    p.steps = std::max(p.steps, kernel.steps);
    const auto addCopy = [&](const std::optional<double>& bytesUs, bool onPath) {
      if (!bytesUs || !onPath) return;
      p.fixedUs += model.stagingCopy.launchUs;
      copyDataUs += *bytesUs / model.stagingCopy.efficiency;
    };
    addCopy(parts.copyIn[k], time.copyInOnPath[k]);
    addCopy(parts.copyOut[k], time.copyOutOnPath[k]);
    if (!time.kernelOnPath[k]) continue;
    p.fixedUs += kernel.fixedUs + processUs;
    p.dataUs += kernel.dataUs;
    if (longest == nullptr || kernel.dataUs > longest->dataUs) longest = &kernel;
  }
  p.dataUs += copyDataUs;
  p.timeUs = p.fixedUs + p.dataUs;
  const std::string staged =
      fmt::format("through the staging windows: {} chunk(s), {} copies{}", parts.kernels.size(), parts.copies(),
                  parts.pipelined && parts.kernels.size() > 1 ? " beside the kernels" : " one after another");
  if (p.fixedUs >= p.dataUs) {
    p.bottleneck = "latency";
    p.phase = "launches, flag waits and copies " + staged;
  } else if (longest == nullptr || copyDataUs >= p.dataUs - copyDataUs) {
    p.bottleneck = fabric.resources[static_cast<std::size_t>(fabric.memory.front())].name;
    p.phase = "the copies " + staged;
  } else {
    p.bottleneck = longest->bottleneck;
    p.phase = longest->phase + ", " + staged;
  }
  return p;
}

}  // namespace peerlink::plan
