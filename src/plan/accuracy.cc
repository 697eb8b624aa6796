#include "plan/accuracy.hpp"

#include <algorithm>
#include <cmath>

#include "peerlink/error.hpp"
#include "plan/hierarchy.hpp"
#include "plan/processes.hpp"

namespace peerlink::plan {
namespace {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

}  // namespace

CellCheck predictNodesCell(const MeasuredRun& run, const Measurement& cell, const CostModel& model) {
  if (!cell.mpi) throw Error(ErrorCode::InvalidInput, run.origin + ": a row across nodes has no MPI figures");
  Network network;
  network.nodes = run.nodes;
  network.path = NetworkPath::Staged;
  network.mpi = cell.mpi;
  Call call = cell.call;
  call.inPlace = false;  // the phases in the node are predicted out of place (hierarchy.hpp)
  call.root = cell.call.root % std::max(run.fabric.ranks(), 1);
  const std::vector<HierarchicalPrediction> shapes = predictAcrossNodes(call, run.fabric, run.context, model, network);
  const HierarchicalPrediction& shape = shapes.front();
  CellCheck check;
  check.run = &run;
  check.cell = &cell;
  check.predicted.algorithm = cell.ran.algorithm;
  check.predicted.kernel = cell.ran.kernel;
  check.predicted.timeUs = shape.timeUs;
  for (const PhaseTime& phase : shape.phases) {
    if (phase.name.find("across nodes") == std::string::npos) continue;
    check.acrossPredictedUs = phase.timeUs;
    check.predicted.bottleneck = phase.bottleneck;
  }
  check.error = check.predicted.timeUs / cell.timeUs - 1;
  if (cell.acrossNodesUs && *cell.acrossNodesUs > 0 && check.acrossPredictedUs) {
    check.acrossError = *check.acrossPredictedUs / *cell.acrossNodesUs - 1;
  }
  return check;
}

std::vector<MachineAccuracy> checkAccuracy(const std::vector<MeasuredRun>& runs, const CostModel& model) {
  std::vector<MachineAccuracy> machines;
  for (const MeasuredRun& run : runs) {
    auto machine = std::find_if(machines.begin(), machines.end(),
                                [&](const MachineAccuracy& m) { return m.machine == run.machine; });
    if (machine == machines.end()) {
      MachineAccuracy added;
      added.machine = run.machine;
      machines.push_back(added);
      machine = machines.end() - 1;
    }
    machine->runs.push_back(run.origin);
    if (!run.skipped.empty()) machine->skipped.push_back(run.origin + ": " + run.skipped);
    for (const Measurement& cell : run.cells) {
      if (cell.call.count == 0 || !(cell.timeUs > 0)) continue;
      if (run.nodes > 1) {
        machine->cells.push_back(predictNodesCell(run, cell, model));
        continue;
      }
      CellCheck check;
      check.run = &run;
      check.cell = &cell;
      check.predicted = predictCall(cell.call, cell.ran, run.fabric, run.context, run.mode, model, cell.hostPath,
                                    UnsharedWay{cell.arenaRing});
      check.error = check.predicted.timeUs / cell.timeUs - 1;
      machine->cells.push_back(check);
    }
  }
  for (MachineAccuracy& machine : machines) {
    std::vector<double> errors;
    for (std::size_t i = 0; i < machine.cells.size(); ++i) {
      errors.push_back(std::fabs(machine.cells[i].error));
      if (errors.back() > std::fabs(machine.cells[machine.worst].error)) machine.worst = i;
    }
    machine.medianAbsError = median(errors);
    std::vector<double> across;
    for (std::size_t i = 0; i < machine.cells.size(); ++i) {
      const std::optional<double>& error = machine.cells[i].acrossError;
      if (!error) continue;
      across.push_back(std::fabs(*error));
      if (across.size() == 1 || across.back() > std::fabs(*machine.cells[machine.acrossWorst].acrossError)) {
        machine.acrossWorst = i;
      }
    }
    machine.acrossCells = across.size();
    machine.acrossMedianAbsError = median(across);
  }
  return machines;
}

}  // namespace peerlink::plan
