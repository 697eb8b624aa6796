#include "plan/accuracy.hpp"

#include <algorithm>
#include <cmath>

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

std::vector<MachineAccuracy> checkAccuracy(const std::vector<MeasuredRun>& runs, const CostModel& model) {
  std::vector<MachineAccuracy> machines;
  for (const MeasuredRun& run : runs) {
    auto machine = std::find_if(machines.begin(), machines.end(),
                                [&](const MachineAccuracy& m) { return m.machine == run.machine; });
    if (machine == machines.end()) {
      machines.push_back({run.machine, {}, {}, {}, 0, 0});
      machine = machines.end() - 1;
    }
    machine->runs.push_back(run.origin);
    if (!run.skipped.empty()) machine->skipped.push_back(run.origin + ": " + run.skipped);
    for (const Measurement& cell : run.cells) {
      if (cell.call.count == 0 || !(cell.timeUs > 0)) continue;
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
  }
  return machines;
}

}  // namespace peerlink::plan
