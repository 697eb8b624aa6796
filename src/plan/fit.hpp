// Fitting the model's costs (cost_model.hpp) to measured runs: each kernel's launch cost and efficiency, the cost
// of a synchronized step and that of a peer (from runs of more than one number of ranks), a process's and the
// staging copies' (from runs of one process per GPU, processes.hpp), the arena ring's slot (from its cells: blocks of
// two grids tell it from the links' efficiency, arena_predict.hpp), by least squares on the
// relative error of every cell (a 3 µs cell counts as much as a 3 ms one), each value pulled weakly towards a prior so
// a kernel seen only at small sizes keeps about the prior efficiency; then each collective's own costs of a kernel,
// held more firmly to the kernel's. Launch, step and peer costs stay >= 0, efficiencies within (0, 1.5].
#pragma once

#include <vector>

#include "plan/cost_model.hpp"
#include "plan/measurements.hpp"

namespace peerlink::plan {

/// `base` with the step and peer costs and every kernel that has cells in `runs` fitted to them, from the same priors
/// whatever `base` holds (so a refit of the same runs gives the same model); kernels without cells keep `base`'s
/// values, and so do the process cost without cells of several processes, the staging copy without staged cells and
/// the arena ring's slot without cells of the arena ring. Runs across nodes set only the fixed cost of a call across
/// nodes on the staged path (CostModel::netCallUs), from their phases across nodes (their eager whole calls are
/// checked, not fitted); without such cells it keeps `base`'s.
/// Cells of 0 elements or without a time are skipped. Throws Error(InvalidInput) when no run has a cell.
CostModel fitCostModel(const std::vector<MeasuredRun>& runs, const CostModel& base);

}  // namespace peerlink::plan
