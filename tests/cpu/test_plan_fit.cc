// The model's fit and its check against measured runs: the fit recovers costs it generated itself, is the same
// whatever model it starts from, and the built-in model stays within the bar (median |error| <= 10%) on the
// committed 4x H200 runs it was fitted to, on the 4x H100 runs it was not, and on sizes left out of a fit.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "error_text.hpp"
#include "peerlink/error.hpp"
#include "plan/accuracy.hpp"
#include "plan/fit.hpp"
#include "plan_runs.hpp"

namespace peerlink::plan {
namespace {

namespace fs = std::filesystem;

// The committed runs (tests/fixtures/plan/strip.py made the copies) of one machine.
std::vector<MeasuredRun> fixtureRuns(const std::string& machine) {
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(fs::path(PEERLINK_FIXTURES_DIR) / "plan" / machine)) {
    if (entry.path().extension() == ".json") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return cli::loadMeasuredRuns(paths, builtInCostModel());
}

// The one machine of `runs`, checked with `model` (its cells point into `runs`, which must outlive it).
MachineAccuracy checkOne(const std::vector<MeasuredRun>& runs, const CostModel& model) {
  std::vector<MachineAccuracy> machines = checkAccuracy(runs, model);
  EXPECT_EQ(machines.size(), 1u);
  return machines.front();
}

// The runs' cells with their times replaced by `model`'s predictions.
std::vector<MeasuredRun> synthetic(std::vector<MeasuredRun> runs, const CostModel& model) {
  for (MeasuredRun& run : runs) {
    for (Measurement& cell : run.cells) cell.timeUs = predictChoice(cell.call, cell.ran, run.fabric, model).timeUs;
  }
  return runs;
}

// Every other power of two of the sweep: the sizes 2^k with k even, or odd.
std::vector<MeasuredRun> sizesOf(std::vector<MeasuredRun> runs, bool even) {
  for (MeasuredRun& run : runs) {
    std::vector<Measurement> kept;
    for (const Measurement& cell : run.cells) {
      const int log2 = static_cast<int>(std::lround(std::log2(static_cast<double>(cell.size))));
      if ((log2 % 2 == 0) == even) kept.push_back(cell);
    }
    run.cells = kept;
  }
  return runs;
}

TEST(PlanFit, RecoversTheCostsThatMadeTheTimes) {
  CostModel truth = builtInCostModel();
  truth.stepUs = 0.7;
  int k = 0;
  for (KernelCosts& costs : truth.kernels) {
    costs.all = {3.0 + 0.25 * k, 0.55 + 0.02 * k, 0, "truth"};
    costs.byCollective.clear();
    ++k;
  }
  const std::vector<MeasuredRun> runs = synthetic(fixtureRuns("h200x4"), truth);
  const CostModel fitted = fitCostModel(runs, builtInCostModel());
  const MachineAccuracy accuracy = checkOne(runs, fitted);
  EXPECT_LT(accuracy.medianAbsError, 0.002);
  EXPECT_LT(std::fabs(accuracy.cells[accuracy.worst].error), 0.02);
  // Kernels that run from small sizes show their launch cost; those that start at 16 MiB or more hide it in
  // their data's time (a few µs of hundreds), so the prior keeps a say there and only their efficiency is sharp.
  for (const Kernel kernel : {Kernel::Ll128OneShot, Kernel::Copy, Kernel::RingReduce, Kernel::CeCopy}) {
    const KernelCost& cost = fitted.costs(kernel).all;
    if (kernel == Kernel::Ll128OneShot || kernel == Kernel::Copy) {
      EXPECT_NEAR(cost.launchUs, truth.costs(kernel).all.launchUs, 0.05) << kernelName(kernel);
    }
    EXPECT_NEAR(cost.efficiency, truth.costs(kernel).all.efficiency, 0.01) << kernelName(kernel);
    EXPECT_EQ(cost.source, "fit");
    EXPECT_GT(cost.cells, 0);
  }
  // A kernel the runs never ran keeps what the base model says.
  EXPECT_EQ(fitted.costs(Kernel::SplitTwoShot).all.source, builtInCostModel().costs(Kernel::SplitTwoShot).all.source);
  EXPECT_EQ(fitted.costs(Kernel::SplitTwoShot).all.cells, 0);
}

TEST(PlanFit, TheSameRunsGiveTheSameModelWhateverTheBase) {
  const std::vector<MeasuredRun> runs = fixtureRuns("h200x4");
  CostModel other = builtInCostModel();
  other.stepUs = 9;
  for (KernelCosts& costs : other.kernels) costs.all = {20, 0.1, 0, "other"};
  const CostModel a = fitCostModel(runs, builtInCostModel());
  const CostModel b = fitCostModel(runs, other);
  EXPECT_DOUBLE_EQ(a.stepUs, b.stepUs);
  for (const KernelInfo& info : kernelRegistry()) {
    if (a.costs(info.kernel).all.cells == 0) continue;
    EXPECT_DOUBLE_EQ(a.costs(info.kernel).all.launchUs, b.costs(info.kernel).all.launchUs) << info.name;
    EXPECT_DOUBLE_EQ(a.costs(info.kernel).all.efficiency, b.costs(info.kernel).all.efficiency) << info.name;
  }
  // The built-in model is that fit (src/plan/model.json, refitted after a change of the model).
  const MachineAccuracy refit = checkOne(runs, a);
  const MachineAccuracy builtIn = checkOne(runs, builtInCostModel());
  EXPECT_NEAR(refit.medianAbsError, builtIn.medianAbsError, 1e-9);
}

TEST(PlanFit, NothingToFitIsAnError) {
  std::vector<MeasuredRun> runs = fixtureRuns("h200x4");
  for (MeasuredRun& run : runs) run.cells.clear();
  EXPECT_TRUE(testing::contains(
      testing::errorOf(ErrorCode::InvalidInput, [&] { fitCostModel(runs, builtInCostModel()); }), "no measured cell"));
}

// The bar (median |error| <= 10%) and today's figures with a margin, so a change that loses accuracy shows.
TEST(PlanAccuracy, FittedMachineEveryCollectiveEightBytesToOneGiB) {
  const std::vector<MeasuredRun> runs = fixtureRuns("h200x4");
  const MachineAccuracy h200 = checkOne(runs, builtInCostModel());
  EXPECT_EQ(h200.machine, "4x NVIDIA H200, one process");
  EXPECT_EQ(h200.cells.size(), 321u);  // 7 collectives, 8 B - 1 GiB, both placements where they exist
  EXPECT_LE(h200.medianAbsError, 0.10);
  EXPECT_LE(h200.medianAbsError, 0.025) << "was 1.5%";
  EXPECT_LE(std::fabs(h200.cells[h200.worst].error), 0.40) << "was 33%";
}

TEST(PlanAccuracy, AnotherMachineTheModelWasNotFittedTo) {
  const std::vector<MeasuredRun> runs = fixtureRuns("h100x4");
  const MachineAccuracy h100 = checkOne(runs, builtInCostModel());
  EXPECT_EQ(h100.machine, "4x NVIDIA H100 80GB HBM3, one process");
  EXPECT_EQ(h100.cells.size(), 321u);
  EXPECT_LE(h100.medianAbsError, 0.10);
  EXPECT_LE(h100.medianAbsError, 0.04) << "was 2.9%";
  EXPECT_LE(std::fabs(h100.cells[h100.worst].error), 0.30) << "was 21%";
}

TEST(PlanAccuracy, SizesLeftOutOfTheFit) {
  const std::vector<MeasuredRun> runs = fixtureRuns("h200x4");
  for (const bool even : {true, false}) {
    const CostModel half = fitCostModel(sizesOf(runs, even), builtInCostModel());
    const std::vector<MeasuredRun> left = sizesOf(runs, !even);
    const MachineAccuracy other = checkOne(left, half);
    EXPECT_GT(other.cells.size(), 150u);
    EXPECT_LE(other.medianAbsError, 0.10) << (even ? "fitted to even powers" : "fitted to odd powers");
    EXPECT_LE(other.medianAbsError, 0.03) << (even ? "fitted to even powers" : "fitted to odd powers");
  }
}

TEST(PlanAccuracy, RunsWithoutKernelNamesAreSkippedWithTheReason) {
  std::vector<MeasuredRun> runs = fixtureRuns("h200x4");
  runs.front().cells.clear();
  runs.front().skipped = "its rows name no kernel";
  const MachineAccuracy accuracy = checkOne(runs, builtInCostModel());
  ASSERT_EQ(accuracy.skipped.size(), 1u);
  EXPECT_TRUE(testing::contains(accuracy.skipped.front(), runs.front().origin + ": its rows name no kernel"));
  EXPECT_EQ(accuracy.runs.size(), runs.size());
}

}  // namespace
}  // namespace peerlink::plan
