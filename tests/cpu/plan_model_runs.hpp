// What the tests of the plan's model share (test_plan_fit.cc, test_plan_host_paths.cc, test_plan_host_processes.cc):
// sizes, the names of the saved host runs, and saved runs whose cells are a model's own predictions, so a fit must
// recover that model.
#pragma once

#include <cstddef>
#include <vector>

#include "plan/processes.hpp"
#include "plan_runs.hpp"

namespace peerlink::plan {

inline constexpr std::size_t kKiB = 1 << 10;
inline constexpr std::size_t kMiB = 1 << 20;
/// The machines of the fitted runs through host memory on 2x H200 (src/plan/model.json): one process, one per GPU.
inline constexpr const char* kOneProcess = "2x NVIDIA H200, one process, through host memory";
inline constexpr const char* kTwoProcesses = "2x NVIDIA H200, 2 processes, through host memory";

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
