// Saved `peerlink coll --json` runs as the model's fit and check read them (plan/measurements.hpp): every
// peerlink cell timed in a CUDA graph, the kernel the run recorded for it, and the fabric of the run's GPUs from
// the topology the run saved.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/cost_model.hpp"
#include "plan/measurements.hpp"

namespace peerlink::cli {

/// The run in the file at `path`. The kernel of each cell is the one the run recorded (its out-of-place choice;
/// kernels renamed since are read by their new names); an in-place cell takes today's in-place choice where that
/// differs from today's out-of-place one for its size. `machine`: "<ranks>x <GPU>, one process" (a document's
/// optional "processes" and "nodes" add ", N processes" and ", N nodes", and a run through host memory -- its topology
/// lacks peer access or its settings say PEERLINK_COLL_HOST_STAGED, and its rows ran the staged plans -- ", through
/// host memory"); its ProcessMode from "processes",
/// `--register` in the command line it recorded and PEERLINK_COLL_STAGE_UNREGISTERED among its settings. Throws
/// Error(InvalidInput) when the file is not a coll run with a topology, or names a kernel or an algorithm peerlink does
/// not know.
plan::MeasuredRun loadMeasuredRun(const std::string& path, const plan::CostModel& model);

/// The same, from a document already read (`path` names it in errors and in the run's origin).
plan::MeasuredRun measuredRunFromJson(const nlohmann::json& document, const std::string& path,
                                      const plan::CostModel& model);

/// Every file of `paths`, in order.
std::vector<plan::MeasuredRun> loadMeasuredRuns(const std::vector<std::string>& paths, const plan::CostModel& model);

}  // namespace peerlink::cli
