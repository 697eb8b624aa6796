// What the tests of the plan's fit share (test_plan_fit.cc, test_plan_host_processes.cc): saved runs whose cells
// are a model's own predictions, so a fit must recover that model.
#pragma once

#include <vector>

#include "plan/processes.hpp"
#include "plan_runs.hpp"

namespace peerlink::plan {

/// `runs` with every cell's time replaced by `model`'s prediction of it, along the way the cell recorded.
inline std::vector<MeasuredRun> syntheticRuns(std::vector<MeasuredRun> runs, const CostModel& model) {
  for (MeasuredRun& run : runs) {
    for (Measurement& cell : run.cells) {
      cell.timeUs = predictCall(cell.call, cell.ran, run.fabric, run.context, run.mode, model, cell.hostPath,
                                UnsharedWay{cell.arenaRing})
                        .timeUs;
    }
  }
  return runs;
}

}  // namespace peerlink::plan
