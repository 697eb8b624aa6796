// Fitting the model's costs (cost_model.hpp) to measured runs: each kernel's launch cost and efficiency and the
// cost of a synchronized step, by least squares on the relative error of every cell (a 3 µs cell counts as much
// as a 3 ms one), each value pulled weakly towards its prior so a kernel seen only at small sizes keeps its prior
// efficiency. Launch and step costs stay >= 0, efficiencies within (0, 1.5].
#pragma once

#include <vector>

#include "plan/cost_model.hpp"
#include "plan/measurements.hpp"

namespace peerlink::plan {

/// `prior` with every kernel that has cells in `runs` (and the step cost) fitted to them; kernels without cells
/// keep their prior values. Cells of 0 elements or without a time are skipped. Throws Error(InvalidInput) when
/// no run has a cell to fit.
CostModel fitCostModel(const std::vector<MeasuredRun>& runs, const CostModel& prior);

}  // namespace peerlink::plan
