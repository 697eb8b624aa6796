// How close the model's predictions come to measured runs: every cell predicted for the kernel that ran it,
// its relative error, and per machine (MeasuredRun::machine) the median absolute error and the worst cell.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "plan/cost_model.hpp"
#include "plan/measurements.hpp"

namespace peerlink::plan {

/// One cell beside its prediction.
struct CellCheck {
  const MeasuredRun* run = nullptr;
  const Measurement* cell = nullptr;
  Prediction predicted;
  double error = 0;  ///< predicted / measured - 1
  /// Across nodes, where the run measured them: the phases across nodes predicted, and their error.
  std::optional<double> acrossPredictedUs;
  std::optional<double> acrossError;
};

/// The cells of one machine.
struct MachineAccuracy {
  std::string machine;
  std::vector<std::string> runs;     ///< their files
  std::vector<std::string> skipped;  ///< "<file>: why" for runs whose cells were left out
  std::vector<CellCheck> cells;
  double medianAbsError = 0;
  std::size_t worst = 0;  ///< index into cells of the largest absolute error
  /// Across nodes: the cells with an acrossError, their median absolute error and the worst (an index into cells).
  std::size_t acrossCells = 0;
  double acrossMedianAbsError = 0;
  std::size_t acrossWorst = 0;
};

/// Every cell of `runs` with a time and elements, predicted with `model`, grouped by machine in the order the
/// machines first appear. The runs must outlive the result (cells point into them). A run across nodes is predicted
/// as the communicator runs it on MPI's staged path (predictAcrossNodes) with each row's MPI figures.
std::vector<MachineAccuracy> checkAccuracy(const std::vector<MeasuredRun>& runs, const CostModel& model);

/// A cell of a run across nodes (run.nodes > 1) predicted on the staged path: the whole call, and its phases across
/// nodes (acrossPredictedUs). Throws Error(InvalidInput) for a cell without MPI figures.
CellCheck predictNodesCell(const MeasuredRun& run, const Measurement& cell, const CostModel& model);

}  // namespace peerlink::plan
