#include "plan/fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink::plan {
namespace {

// How strongly a value is held to its prior: a relative deviation of 100% costs what a 3% error costs on one cell.
// A collective's own costs are held ten times as strongly to their kernel's, so a few cells move them only as
// far as they agree.
constexpr double kKernelPriorWeight = 1e-3;
constexpr double kCollectivePriorWeight = 1e-2;
// The priors every fit starts from, whatever model it was given, so refitting the same runs gives the same model:
// a launch and first flag wait of a few µs (4 with three peers), and about the 78-82% of the link model's rate that
// `peerlink bench`'s SM and copy-engine copies reach on NVLink (README).
constexpr double kPriorLaunchUs = 2.5;
constexpr double kPriorPeerUs = 0.5;
constexpr double kPriorEfficiency = 0.8;
constexpr double kPriorStepUs = 1.0;
constexpr double kMinEfficiency = 0.02;
constexpr double kLeastDataShare = 0.2;
constexpr double kLeastDataSpread = 4;
constexpr double kMaxEfficiency = 1.5;
constexpr int kAllCollectives = -1;

// What the model makes of a cell before its costs: the kernel and collective, the peers, the synchronized steps
// beyond the first and the bytes' time at full efficiency.
struct Row {
  Kernel kernel = Kernel::Copy;
  int collective = 0;
  double peers = 0;
  double extraSteps = 0;
  double dataUs = 0;
  double measuredUs = 0;
};

// The costs a row's kernel is fitted as: the kernel's over every collective, or its own collective's.
using Group = std::pair<Kernel, int>;

CostModel unitModel(const CostModel& base) {
  CostModel unit = base;
  unit.stepUs = 0;
  unit.peerUs = 0;
  for (KernelCosts& costs : unit.kernels) {
    costs.all = {0, 1, 0, ""};
    costs.byCollective.clear();
  }
  return unit;
}

std::vector<Row> rowsOf(const std::vector<MeasuredRun>& runs, const CostModel& base) {
  const CostModel unit = unitModel(base);
  std::vector<Row> rows;
  for (const MeasuredRun& run : runs) {
    for (const Measurement& cell : run.cells) {
      if (cell.call.count == 0 || !(cell.timeUs > 0)) continue;
      const Prediction p = predictChoice(cell.call, cell.ran, run.fabric, unit);
      rows.push_back({cell.ran.kernel, static_cast<int>(cell.call.collective),
                      static_cast<double>(run.fabric.ranks() - 1), static_cast<double>(p.steps - 1), p.dataUs,
                      cell.timeUs});
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

// The costs every kernel shares: a synchronized step's and a peer's.
struct Shared {
  double stepUs = 0;
  double peerUs = 0;
};

// The unknowns: the shared costs, then each group's launch cost and inverse efficiency, found by least squares on
// the rows' relative errors with each value held to its prior. A group seen on one number of ranks cannot tell its
// launch from the peers' part: the peer cost comes from the groups seen on several.
class Unknowns {
 public:
  // `groupOf` names each row's group, `priorOf` a group's prior costs; `fitShared`: the shared costs are unknowns
  // too (else they stay at `shared`'s).
  template <typename GroupOf, typename PriorOf>
  Unknowns(const std::vector<Row>& rows, GroupOf groupOf, PriorOf priorOf, Shared shared, bool fitShared,
           double priorWeight)
      : priorWeight_(priorWeight) {
    values_.push_back(shared.stepUs);
    values_.push_back(shared.peerUs);
    for (const Row& row : rows) {
      const Group group = groupOf(row);
      rowSlots_.push_back(slotOf(group, priorOf(group)));
    }
    priors_ = values_;
    fixed_.assign(values_.size(), false);
    fixed_[kStep] = !fitShared;
    fixed_[kPeer] = !fitShared;
    holdWhatTheCellsCannotShow(rows);
  }

  // Solves until every value is within its bounds: one out of them is fixed at its bound and the rest solved again.
  void fit(const std::vector<Row>& rows) {
    for (std::size_t round = 0; round <= values_.size(); ++round) {
      if (solveOnce(rows)) return;
    }
  }

  Shared shared() const { return {values_[kStep], values_[kPeer]}; }
  // Every group with its fitted costs and cells.
  std::map<Group, KernelCost> costs() const {
    std::map<Group, KernelCost> out;
    for (const auto& [group, slot] : slots_) {
      KernelCost cost{values_[slot], 1.0 / values_[slot + 1], 0, "fit"};
      for (const std::size_t rowSlot : rowSlots_) cost.cells += rowSlot == slot ? 1 : 0;
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
      auto found = spread.find(rowSlots_[r]);
      const double data = rows[r].dataUs;
      const double share = data / rows[r].measuredUs;
      if (found == spread.end()) {
        spread[rowSlots_[r]] = {data, data, share};
        continue;
      }
      auto& [least, most, largest] = found->second;
      least = std::min(least, data);
      most = std::max(most, data);
      largest = std::max(largest, share);
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
  static constexpr std::size_t kFirstGroup = 2;

  // The step, peer and launch costs are in µs (>= 0), the others inverse efficiencies.
  static bool isLaunch(std::size_t i) { return i < kFirstGroup || (i - kFirstGroup) % 2 == 0; }
  static double lowerBound(std::size_t i) { return isLaunch(i) ? 0.0 : 1.0 / kMaxEfficiency; }
  static double upperBound(std::size_t i) { return isLaunch(i) ? HUGE_VAL : 1.0 / kMinEfficiency; }

  bool solveOnce(const std::vector<Row>& rows) {
    const std::size_t n = values_.size();
    std::vector<std::vector<double>> normal(n, std::vector<double>(n, 0.0));
    std::vector<double> rhs(n, 0.0);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const Row& row = rows[r];
      const double w = 1.0 / (row.measuredUs * row.measuredUs);
      const std::pair<std::size_t, double> terms[] = {
          {kStep, row.extraSteps}, {kPeer, row.peers}, {rowSlots_[r], 1.0}, {rowSlots_[r] + 1, row.dataUs}};
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
  std::vector<std::size_t> rowSlots_;
  std::map<std::size_t, std::string> held_;  // slot -> what the fit held at its prior, and why
};

}  // namespace

CostModel fitCostModel(const std::vector<MeasuredRun>& runs, const CostModel& base) {
  const std::vector<Row> rows = rowsOf(runs, base);
  if (rows.empty()) throw Error(ErrorCode::InvalidInput, "no measured cell to fit the model to");
  CostModel model = base;
  // First every kernel over all its cells (and the step and peer costs), then each collective's own costs held to
  // those.
  const auto byKernel = [](const Row& row) { return Group{row.kernel, kAllCollectives}; };
  const auto firstPrior = [](const Group&) { return KernelCost{kPriorLaunchUs, kPriorEfficiency, 0, ""}; };
  Unknowns kernels(rows, byKernel, firstPrior, {kPriorStepUs, kPriorPeerUs}, true, kKernelPriorWeight);
  kernels.fit(rows);
  const Shared shared = kernels.shared();
  model.stepUs = shared.stepUs;
  model.peerUs = shared.peerUs;
  for (const auto& [group, cost] : kernels.costs()) {
    model.costs(group.first).all = cost;
    model.costs(group.first).byCollective.clear();
  }
  const auto byCollective = [](const Row& row) { return Group{row.kernel, row.collective}; };
  const auto kernelPrior = [&](const Group& group) { return model.costs(group.first).all; };
  Unknowns collectives(rows, byCollective, kernelPrior, shared, false, kCollectivePriorWeight);
  collectives.fit(rows);
  for (const auto& [group, cost] : collectives.costs()) {
    model.costs(group.first).byCollective[static_cast<Collective>(group.second)] = cost;
  }
  return model;
}

}  // namespace peerlink::plan
