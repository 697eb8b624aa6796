#include "plan/fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "peerlink/error.hpp"
#include "plan/accuracy.hpp"
#include "plan/processes.hpp"
#include "plan/staged_time.hpp"

namespace peerlink::plan {
namespace {

// How strongly a value is held to its prior: a relative deviation of 100% costs what a 3% error costs on one cell.
// A collective's own costs are held ten times as strongly to their kernel's, so a few cells move them only as
// far as they agree.
constexpr double kKernelPriorWeight = 1e-3;
constexpr double kCollectivePriorWeight = 1e-2;
// The priors every fit starts from, whatever model it was given, so refitting the same runs gives the same model:
// a launch and first flag wait of a few µs (4 with three peers), a second process's part well under that, a staging
// copy's launch (a copy node in the graph) of a few µs, and about the 78-82% of the link model's rate that
// `peerlink bench`'s SM and copy-engine copies reach on NVLink (README), the staging copies' of the memory's too.
constexpr double kPriorLaunchUs = 2.5;
constexpr double kPriorPeerUs = 0.5;
constexpr double kPriorProcessUs = 0.5;
// A second process's part of a call through host memory: as a kernel's, the graphs' starts apart.
constexpr double kPriorHostProcessUs = 0.5;
constexpr double kPriorCopyLaunchUs = 2.5;
constexpr double kPriorEfficiency = 0.8;
constexpr double kPriorStepUs = 1.0;
// A staged plan's step through host memory: the barrier kernel's meeting of the ranks, about 20 µs on an H200
// (coll/comm_state.hpp's kPlanChunkBytes).
constexpr double kPriorHostStepUs = 20.0;
// A slot of the arena ring: a few µs for the fence that waits for a block's 256 KiB of stores to land across NVLink
// and the flag's trip (coll/arena_ring.hpp).
constexpr double kPriorArenaSlotUs = 5.0;
// The arena ring's launch: the host ring's kernel, whose launch and first slots' waits through host memory cost 10-20
// µs on an H200 (docs/plan.md), in GPU memory less.
constexpr double kPriorArenaLaunchUs = 8.0;
// A call across nodes on the staged path beyond its copies and messages: the transport's thread starting it, polling
// the copies' and reductions' events and ending it, some tens of µs on an H200 (docs/multinode.md: the transport alone
// takes 24 µs for an 8 B all-reduce staged on GPU memory, MPI's exchange 2).
constexpr double kPriorNetCallUs = 20.0;
constexpr double kMinEfficiency = 0.02;
constexpr double kLeastDataShare = 0.2;
constexpr double kLeastDataSpread = 4;
constexpr double kMaxEfficiency = 1.5;
constexpr int kAllCollectives = -1;

// What the model makes of a cell before its costs: each kernel it launches (one, or a staged call's chunks) with
// its bytes' time at full efficiency, its peers', processes' and synchronized steps' counts, and a staged call's
// copies with their bytes' time at the memory's whole rate. Which of them add up to the cell's time is the
// schedule's critical path (staged_time.hpp), found under the values being fitted.
struct Part {
  Kernel kernel = Kernel::Copy;
  std::optional<HostPath> host;   // a way through host memory instead of a kernel: its steps cost host_step_us
  std::optional<ArenaWay> arena;  // a way of the arena ring instead of a kernel: its slots cost arena_slot_us
  double arenaSlots = 0;
  int collective = 0;
  double dataUs = 0;
  double peers = 0;
  double processes = 0;
  double extraSteps = 0;
};
struct Row {
  std::vector<Part> parts;
  std::vector<std::optional<double>> copyIn;  // per chunk of a staged call
  std::vector<std::optional<double>> copyOut;
  bool pipelined = false;
  double measuredUs = 0;
};

// Which of a row's operations are on its critical path.
struct Path {
  std::vector<bool> copyIn;
  std::vector<bool> kernel;
  std::vector<bool> copyOut;
  bool operator==(const Path& other) const {
    return copyIn == other.copyIn && kernel == other.kernel && copyOut == other.copyOut;
  }
};

// The costs a part's kernel is fitted as: the kernel's (or the way through host memory's, numbered after the
// kernels, or the arena ring's, after those: costIndexOf) over every collective, or its own collective's.
using Group = std::pair<int, int>;

int costIndexOf(const Part& part) {
  if (part.arena) return static_cast<int>(kKernelCount + kHostPathCount + static_cast<std::size_t>(*part.arena));
  return part.host ? static_cast<int>(kKernelCount + static_cast<std::size_t>(*part.host))
                   : static_cast<int>(part.kernel);
}

KernelCosts& costsAt(CostModel& model, int index) {
  const auto i = static_cast<std::size_t>(index);
  if (i < kKernelCount) return model.costs(static_cast<Kernel>(i));
  if (i < kKernelCount + kHostPathCount) return model.costs(static_cast<HostPath>(i - kKernelCount));
  return model.costs(static_cast<ArenaWay>(i - kKernelCount - kHostPathCount));
}

CostModel unitModel(const CostModel& base) {
  CostModel unit = base;
  unit.stepUs = 0;
  unit.peerUs = 0;
  unit.processUs = 0;
  unit.stagingCopy = {0, 1, 0, ""};
  unit.hostStepUs = 0;
  unit.arenaSlotUs = 0;
  for (KernelCosts& costs : unit.arenaWays) {
    costs.all = {0, 1, 0, ""};
    costs.byCollective.clear();
  }
  for (KernelCosts& costs : unit.kernels) {
    costs.all = {0, 1, 0, ""};
    costs.byCollective.clear();
  }
  for (KernelCosts& costs : unit.hostPaths) {
    costs.all = {0, 1, 0, ""};
    costs.byCollective.clear();
  }
  return unit;
}

std::vector<Row> rowsOf(const std::vector<MeasuredRun>& runs, const CostModel& base) {
  const CostModel unit = unitModel(base);
  std::vector<Row> rows;
  for (const MeasuredRun& run : runs) {
    if (run.nodes > 1) continue;  // calls across nodes: their own fixed cost (fitNetCall), eager times
    for (const Measurement& cell : run.cells) {
      if (cell.call.count == 0 || !(cell.timeUs > 0)) continue;
      const CallParts parts = callParts(cell.call, cell.ran, run.fabric, run.context, run.mode, unit, cell.hostPath,
                                        UnsharedWay{cell.arenaRing});
      Row row;
      for (const Prediction& p : parts.kernels) {
        // Through host memory a fixed cost has no peers' part (cost_model.hpp); its processes' part is
        // host_process_us, not process_us (kernelTerms).
        const bool host = p.hostPath.has_value();
        row.parts.push_back({p.kernel, p.hostPath, p.arenaWay, p.arenaSlots, static_cast<int>(cell.call.collective),
                             p.dataUs, host ? 0.0 : static_cast<double>(run.fabric.ranks() - 1),
                             static_cast<double>(run.mode.processes - 1), static_cast<double>(p.steps - 1)});
      }
      row.copyIn = parts.copyIn;
      row.copyOut = parts.copyOut;
      row.pipelined = parts.pipelined;
      row.measuredUs = cell.timeUs;
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

// Solves the square system a x = b by Gaussian elimination with partial pivoting; a singular column gets 0.
std::vector<double> solve(std::vector<std::vector<double>> a, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < n; ++r) {
      if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
    }
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    if (std::fabs(a[col][col]) < 1e-300) continue;
    for (std::size_t r = col + 1; r < n; ++r) {
      const double factor = a[r][col] / a[col][col];
      for (std::size_t c = col; c < n; ++c) a[r][c] -= factor * a[col][c];
      b[r] -= factor * b[col];
    }
  }
  std::vector<double> x(n, 0.0);
  for (std::size_t i = n; i-- > 0;) {
    if (std::fabs(a[i][i]) < 1e-300) continue;
    double sum = b[i];
    for (std::size_t c = i + 1; c < n; ++c) sum -= a[i][c] * x[c];
    x[i] = sum / a[i][i];
  }
  return x;
}

// The costs every kernel shares: a synchronized step's, a peer's, a process's, the staging copies', a staged
// plan's step through host memory, a slot of the arena ring, and a process's through host memory.
struct Shared {
  double stepUs = 0;
  double peerUs = 0;
  double processUs = 0;
  double copyLaunchUs = 0;
  double copyEfficiency = 1;
  double hostStepUs = 0;
  double arenaSlotUs = 0;
  double hostProcessUs = 0;
};

// The unknowns: the shared costs, then each group's launch cost and inverse efficiency, found by least squares on
// the rows' relative errors with each value held to its prior. A group seen on one number of ranks cannot tell its
// launch from the peers' part: the peer cost comes from the groups seen on several; the process cost from the
// cells of one process per GPU beside those of one process.
class Unknowns {
 public:
  // `groupOf` names each part's group, `priorOf` a group's prior costs; `fitShared`: the shared costs are unknowns
  // too (else they stay at `shared`'s).
  template <typename GroupOf, typename PriorOf>
  Unknowns(const std::vector<Row>& rows, GroupOf groupOf, PriorOf priorOf, Shared shared, bool fitShared,
           double priorWeight)
      : priorWeight_(priorWeight) {
    values_ = {
        shared.stepUs,     shared.peerUs,      shared.processUs,    shared.copyLaunchUs, 1.0 / shared.copyEfficiency,
        shared.hostStepUs, shared.arenaSlotUs, shared.hostProcessUs};
    for (const Row& row : rows) {
      std::vector<std::size_t> slots;
      for (const Part& part : row.parts) {
        const Group group = groupOf(part);
        slots.push_back(slotOf(group, priorOf(group)));
      }
      rowSlots_.push_back(slots);
    }
    priors_ = values_;
    fixed_.assign(values_.size(), false);
    for (std::size_t i = 0; i < kFirstGroup; ++i) fixed_[i] = !fitShared;
    holdWhatTheCellsCannotShow(rows);
  }

  // Each cell's time is the sum of the operations on its critical path, which the values decide (a staged call's
  // kernels against the copies beside them): the paths are found under the values so far, the values solved for
  // them, and again until the paths stay (at most kPathRounds times). Each solve goes on until every value is
  // within its bounds: one out of them is fixed at its bound and the rest solved again.
  void fit(const std::vector<Row>& rows) {
    for (int round = 0; round < kPathRounds; ++round) {
      std::vector<Path> paths = pathsOf(rows);
      if (round > 0 && paths == paths_) return;
      paths_ = std::move(paths);
      for (std::size_t bound = 0; bound <= values_.size(); ++bound) {
        if (solveOnce(rows)) break;
      }
    }
  }

  Shared shared() const {
    return {values_[kStep],
            values_[kPeer],
            values_[kProcess],
            values_[kCopyLaunch],
            1.0 / values_[kCopyInverse],
            values_[kHostStep],
            values_[kArenaSlot],
            values_[kHostProcess]};
  }
  // Every group with its fitted costs and cells (a cell counts once for each group its kernels fall in).
  std::map<Group, KernelCost> costs() const {
    std::map<Group, KernelCost> out;
    for (const auto& [group, slot] : slots_) {
      KernelCost cost{values_[slot], 1.0 / values_[slot + 1], 0, "fit"};
      for (const std::vector<std::size_t>& slots : rowSlots_) {
        cost.cells += std::find(slots.begin(), slots.end(), slot) != slots.end() ? 1 : 0;
      }
      if (held_.count(slot) != 0) cost.source += "; " + held_.at(slot);
      out[group] = cost;
    }
    return out;
  }

 private:
  // A group's cells tell its launch cost from its efficiency only where their bytes' share of the time varies: a
  // group whose bytes never take a fifth of a cell's time keeps its prior efficiency, and one whose cells' bytes
  // span less than a factor of 4 keeps its prior launch cost (the two would trade against each other and mislead
  // every size outside the cells').
  void holdWhatTheCellsCannotShow(const std::vector<Row>& rows) {
    std::map<std::size_t, std::array<double, 3>> spread;  // slot -> least data, most data, largest data share
    for (std::size_t r = 0; r < rows.size(); ++r) {
      for (std::size_t k = 0; k < rows[r].parts.size(); ++k) {
        const std::size_t slot = rowSlots_[r][k];
        const double data = rows[r].parts[k].dataUs;
        const double share = data / rows[r].measuredUs;
        auto found = spread.find(slot);
        if (found == spread.end()) {
          spread[slot] = {data, data, share};
          continue;
        }
        auto& [least, most, largest] = found->second;
        least = std::min(least, data);
        most = std::max(most, data);
        largest = std::max(largest, share);
      }
    }
    for (const auto& [slot, s] : spread) {
      const auto& [least, most, largest] = s;
      if (largest < kLeastDataShare) {
        fixed_[slot + 1] = true;
        held_[slot] = "efficiency held at its prior (the bytes never take a fifth of a cell's time)";
      } else if (most < kLeastDataSpread * least) {
        fixed_[slot] = true;
        held_[slot] = "launch held at its prior (the cells' bytes span less than 4x)";
      }
    }
  }

  std::size_t slotOf(const Group& group, const KernelCost& prior) {
    const auto found = slots_.find(group);
    if (found != slots_.end()) return found->second;
    const std::size_t slot = values_.size();
    slots_[group] = slot;
    values_.push_back(prior.launchUs);
    values_.push_back(1.0 / prior.efficiency);
    return slot;
  }

  static constexpr std::size_t kStep = 0;
  static constexpr std::size_t kPeer = 1;
  static constexpr std::size_t kProcess = 2;
  static constexpr std::size_t kCopyLaunch = 3;
  static constexpr std::size_t kCopyInverse = 4;  // the staging copies' inverse efficiency
  static constexpr std::size_t kHostStep = 5;
  static constexpr std::size_t kArenaSlot = 6;
  static constexpr std::size_t kHostProcess = 7;
  static constexpr std::size_t kFirstGroup = 8;
  static constexpr int kPathRounds = 20;

  // The step, peer, process, host step, arena slot, host process and launch costs are in µs (>= 0), the others
  // inverse efficiencies.
  static bool isLaunch(std::size_t i) { return i != kCopyInverse && (i < kFirstGroup || (i - kFirstGroup) % 2 == 0); }
  static double lowerBound(std::size_t i) { return isLaunch(i) ? 0.0 : 1.0 / kMaxEfficiency; }
  static double upperBound(std::size_t i) { return isLaunch(i) ? HUGE_VAL : 1.0 / kMinEfficiency; }

  // A kernel part's terms: its group's launch and inverse efficiency, the peers', processes' and steps' costs (a way
  // through host memory's own processes' and steps' costs), and the arena ring's slots.
  std::vector<std::pair<std::size_t, double>> kernelTerms(const Part& part, std::size_t slot) const {
    return {{slot, 1.0},
            {slot + 1, part.dataUs},
            {kPeer, part.peers},
            {part.host ? kHostProcess : kProcess, part.processes},
            {part.host ? kHostStep : kStep, part.extraSteps},
            {kArenaSlot, part.arenaSlots}};
  }
  std::vector<std::pair<std::size_t, double>> copyTerms(double bytesUs) const {
    return {{kCopyLaunch, 1.0}, {kCopyInverse, bytesUs}};
  }
  double valueOf(const std::vector<std::pair<std::size_t, double>>& terms) const {
    double sum = 0;
    for (const auto& [i, x] : terms) sum += x * values_[i];
    return sum;
  }

  // Each row's critical path under the values so far: its one kernel, or its staged schedule's (stagedTime).
  std::vector<Path> pathsOf(const std::vector<Row>& rows) const {
    std::vector<Path> paths;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const Row& row = rows[r];
      if (row.copyIn.empty()) {
        paths.push_back({{}, std::vector<bool>(row.parts.size(), true), {}});
        continue;
      }
      StagedDurations durations;
      const auto copy = [&](const std::optional<double>& bytesUs) -> std::optional<double> {
        if (!bytesUs) return std::nullopt;
        return valueOf(copyTerms(*bytesUs));
      };
      for (std::size_t k = 0; k < row.parts.size(); ++k) {
        durations.copyIn.push_back(copy(row.copyIn[k]));
        durations.kernel.push_back(valueOf(kernelTerms(row.parts[k], rowSlots_[r][k])));
        durations.copyOut.push_back(copy(row.copyOut[k]));
      }
      const StagedTime time = stagedTime(durations, row.pipelined);
      paths.push_back({time.copyInOnPath, time.kernelOnPath, time.copyOutOnPath});
    }
    return paths;
  }

  // The terms of row `r` on its critical path.
  std::vector<std::pair<std::size_t, double>> termsOf(const Row& row, std::size_t r) const {
    std::vector<std::pair<std::size_t, double>> terms;
    const Path& path = paths_[r];
    const auto add = [&](const std::vector<std::pair<std::size_t, double>>& more) {
      terms.insert(terms.end(), more.begin(), more.end());
    };
    for (std::size_t k = 0; k < row.parts.size(); ++k) {
      if (path.kernel[k]) add(kernelTerms(row.parts[k], rowSlots_[r][k]));
      if (row.copyIn.empty()) continue;
      if (row.copyIn[k] && path.copyIn[k]) add(copyTerms(*row.copyIn[k]));
      if (row.copyOut[k] && path.copyOut[k]) add(copyTerms(*row.copyOut[k]));
    }
    return terms;
  }

  bool solveOnce(const std::vector<Row>& rows) {
    const std::size_t n = values_.size();
    std::vector<std::vector<double>> normal(n, std::vector<double>(n, 0.0));
    std::vector<double> rhs(n, 0.0);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const Row& row = rows[r];
      const double w = 1.0 / (row.measuredUs * row.measuredUs);
      const std::vector<std::pair<std::size_t, double>> terms = termsOf(row, r);
      double target = row.measuredUs;
      for (const auto& [i, x] : terms) {
        if (fixed_[i]) target -= x * values_[i];
      }
      for (const auto& [i, xi] : terms) {
        if (fixed_[i]) continue;
        rhs[i] += w * xi * target;
        for (const auto& [j, xj] : terms) {
          if (!fixed_[j]) normal[i][j] += w * xi * xj;
        }
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (fixed_[i]) {
        normal[i][i] = 1;
        rhs[i] = values_[i];
        continue;
      }
      const double scale = priors_[i] > 0 ? priors_[i] : 1.0;
      normal[i][i] += priorWeight_ / (scale * scale);
      rhs[i] += priorWeight_ * priors_[i] / (scale * scale);
    }
    const std::vector<double> solved = solve(normal, rhs);
    for (std::size_t i = 0; i < n; ++i) {
      if (fixed_[i] || (solved[i] >= lowerBound(i) && solved[i] <= upperBound(i))) continue;
      values_[i] = solved[i] < lowerBound(i) ? lowerBound(i) : upperBound(i);
      fixed_[i] = true;
      return false;
    }
    values_ = solved;
    return true;
  }

  double priorWeight_;
  std::vector<double> values_;
  std::vector<double> priors_;
  std::vector<bool> fixed_;
  std::map<Group, std::size_t> slots_;
  std::vector<std::vector<std::size_t>> rowSlots_;  // per row, each part's slot
  std::vector<Path> paths_;                         // per row, its critical path under the values
  std::map<std::size_t, std::string> held_;         // slot -> what the fit held at its prior, and why
};

// How many cells `has` holds for (staged ones, those of several processes).
template <typename Has>
int cellsWith(const std::vector<Row>& rows, Has has) {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), has));
}

// The fixed cost of a call across nodes on the staged path (CostModel::netCallUs) from the phases across nodes the
// runs measured (across_nodes_us), the rest of each prediction (copies, MPI) as `model` has it: least squares on the
// relative error, pulled weakly towards the prior as every value here; in closed form, the one unknown entering each
// prediction as a sum. Returns the cells it had (0: `model` keeps its value).
int fitNetCall(const std::vector<MeasuredRun>& runs, CostModel& model) {
  CostModel zero = model;
  zero.netCallUs = 0;
  double numerator = kKernelPriorWeight * kPriorNetCallUs / (kPriorNetCallUs * kPriorNetCallUs);
  double denominator = kKernelPriorWeight / (kPriorNetCallUs * kPriorNetCallUs);
  int cells = 0;
  for (const MeasuredRun& run : runs) {
    if (run.nodes <= 1) continue;
    for (const Measurement& cell : run.cells) {
      if (cell.call.count == 0 || !cell.acrossNodesUs || !(*cell.acrossNodesUs > 0) || !cell.mpi) continue;
      const CellCheck check = predictNodesCell(run, cell, zero);
      if (!check.acrossPredictedUs) continue;
      const double measured = *cell.acrossNodesUs;
      numerator += (measured - *check.acrossPredictedUs) / (measured * measured);
      denominator += 1 / (measured * measured);
      ++cells;
    }
  }
  if (cells == 0) return 0;
  model.netCallUs = std::max(0.0, numerator / denominator);
  model.netCallCells = cells;
  return cells;
}

}  // namespace

CostModel fitCostModel(const std::vector<MeasuredRun>& runs, const CostModel& base) {
  const std::vector<Row> rows = rowsOf(runs, base);
  CostModel model = base;
  if (rows.empty()) {
    if (fitNetCall(runs, model) > 0) return model;  // only calls across nodes: the kernels keep `base`'s costs
    throw Error(ErrorCode::InvalidInput, "no measured cell to fit the model to");
  }
  // First every kernel over all its cells (and the shared costs), then each collective's own costs held to those.
  const auto byKernel = [](const Part& part) { return Group{costIndexOf(part), kAllCollectives}; };
  const auto firstPrior = [](const Group& group) {
    const bool arena = static_cast<std::size_t>(group.first) >= kKernelCount + kHostPathCount;
    return KernelCost{arena ? kPriorArenaLaunchUs : kPriorLaunchUs, kPriorEfficiency, 0, ""};
  };
  const Shared priors{kPriorStepUs,     kPriorPeerUs,     kPriorProcessUs,   kPriorCopyLaunchUs,
                      kPriorEfficiency, kPriorHostStepUs, kPriorArenaSlotUs, kPriorHostProcessUs};
  Unknowns kernels(rows, byKernel, firstPrior, priors, true, kKernelPriorWeight);
  kernels.fit(rows);
  const Shared shared = kernels.shared();
  model.stepUs = shared.stepUs;
  model.peerUs = shared.peerUs;
  // Each process cost from the cells of several processes that pay it: through host memory or not.
  const int multiProcess = cellsWith(
      rows, [](const Row& row) { return row.parts.front().processes > 0 && !row.parts.front().host.has_value(); });
  model.processUs = multiProcess > 0 ? shared.processUs : base.processUs;
  const int hostMultiProcess = cellsWith(
      rows, [](const Row& row) { return row.parts.front().processes > 0 && row.parts.front().host.has_value(); });
  model.hostProcessUs = hostMultiProcess > 0 ? shared.hostProcessUs : base.hostProcessUs;
  const int staged = cellsWith(rows, [](const Row& row) { return !row.copyIn.empty(); });
  if (staged > 0) model.stagingCopy = {shared.copyLaunchUs, shared.copyEfficiency, staged, "fit"};
  const int host = cellsWith(rows, [](const Row& row) { return row.parts.front().host.has_value(); });
  model.hostStepUs = host > 0 ? shared.hostStepUs : base.hostStepUs;
  const int arena = cellsWith(rows, [](const Row& row) { return row.parts.front().arena.has_value(); });
  model.arenaSlotUs = arena > 0 ? shared.arenaSlotUs : base.arenaSlotUs;
  for (const auto& [group, cost] : kernels.costs()) {
    costsAt(model, group.first).all = cost;
    costsAt(model, group.first).byCollective.clear();
  }
  const auto byCollective = [](const Part& part) { return Group{costIndexOf(part), part.collective}; };
  const auto kernelPrior = [&](const Group& group) { return costsAt(model, group.first).all; };
  Unknowns collectives(rows, byCollective, kernelPrior, shared, false, kCollectivePriorWeight);
  collectives.fit(rows);
  for (const auto& [group, cost] : collectives.costs()) {
    costsAt(model, group.first).byCollective[static_cast<Collective>(group.second)] = cost;
  }
  fitNetCall(runs, model);
  return model;
}

}  // namespace peerlink::plan
