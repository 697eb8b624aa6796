// The model's fit and its check against measured runs: the fit recovers costs it generated itself (the per-peer
// cost from runs of two numbers of ranks, the per-process and staging-copy costs from runs of one process per GPU),
// is the same whatever model it starts from, and the built-in model stays within the bar (median |error|
// <= 10%) on the committed 4x and 2x H200 runs it was fitted to (one process; 2 processes, staged as the
// communicator pipelines it by default and registered), on the 4x H100 runs it was not, on a 2-process run staged
// serially (PEERLINK_COLL_STAGE_UNREGISTERED=SERIAL), and on sizes left out of a fit; the 2x H200 cells miss the
// bar without the per-peer cost, the staged 2-process ones without the staging copies or in the other run's
// staging order.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "error_text.hpp"
#include "peerlink/error.hpp"
#include "plan/accuracy.hpp"
#include "plan/fit.hpp"
#include "plan/processes.hpp"
#include "plan_model_runs.hpp"
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

// The runs the built-in model was fitted to: 4x H200 (every collective, one process) and 2x H200 (all-reduce, one
// process and one per GPU staging every byte; all-reduce, all-gather and reduce-scatter one per GPU staging the
// peers' parts; every collective but send/recv one per GPU as the arena ring and, the same sweeps with the ring off,
// through the staging windows; not the serial staging run, h200x2-serial, which only checks the model).
std::vector<MeasuredRun> fittedRuns() {
  std::vector<MeasuredRun> runs = fixtureRuns("h200x4");
  for (const char* machine : {"h200x2", "h200x2-procs", "h200x2-peers", "h200x2-arena", "h200x2-arena-off"}) {
    for (MeasuredRun& run : fixtureRuns(machine)) runs.push_back(std::move(run));
  }
  return runs;
}

// The machine `name` of `runs`, checked with `model` (its cells point into `runs`, which must outlive it).
MachineAccuracy checkMachine(const std::vector<MeasuredRun>& runs, const CostModel& model, const std::string& name) {
  for (MachineAccuracy& machine : checkAccuracy(runs, model)) {
    if (machine.machine == name) return machine;
  }
  ADD_FAILURE() << "no cells of " << name;
  return {};
}

constexpr const char* kH200x4 = "4x NVIDIA H200, one process";
constexpr const char* kH200x2 = "2x NVIDIA H200, one process";
constexpr const char* kH200x2Procs = "2x NVIDIA H200, 2 processes";

// `model` with its per-peer cost replaced by `peerUs`, every launch cost moved so that 4 ranks (3 peers) see the
// same fixed cost as before: the fitted machine's figures stay, the 2-rank ones move.
CostModel withPeerCost(CostModel model, double peerUs) {
  const double shift = 3 * (model.peerUs - peerUs);
  for (KernelCosts& costs : model.kernels) {
    costs.all.launchUs += shift;
    for (auto& [collective, cost] : costs.byCollective) cost.launchUs += shift;
  }
  model.peerUs = peerUs;
  return model;
}

// The one machine of `runs`, checked with `model` (its cells point into `runs`, which must outlive it).
MachineAccuracy checkOne(const std::vector<MeasuredRun>& runs, const CostModel& model) {
  std::vector<MachineAccuracy> machines = checkAccuracy(runs, model);
  EXPECT_EQ(machines.size(), 1u);
  return machines.front();
}

// Every other size of each run's sweep: the first, third, ... (`even`), or the second, fourth, ... (8 B, 32 B,
// 128 B, ... and 16 B, 64 B, ... of a sweep by 2 from 8 B; 8 B, 128 B, 2 KiB, ... and 32 B, 512 B, ... of one by 4).
std::vector<MeasuredRun> sizesOf(std::vector<MeasuredRun> runs, bool even) {
  for (MeasuredRun& run : runs) {
    std::set<std::size_t> sizes;
    for (const Measurement& cell : run.cells) sizes.insert(cell.size);
    std::vector<Measurement> kept;
    for (const Measurement& cell : run.cells) {
      const auto index = std::distance(sizes.begin(), sizes.find(cell.size));
      if ((index % 2 == 0) == even) kept.push_back(cell);
    }
    run.cells = kept;
  }
  return runs;
}

TEST(PlanFit, RecoversTheCostsThatMadeTheTimes) {
  CostModel truth = builtInCostModel();
  truth.stepUs = 0.7;
  truth.peerUs = 0.6;
  truth.processUs = 0.9;
  truth.stagingCopy = {1.6, 0.55, 0, "truth"};
  int k = 0;
  for (KernelCosts& costs : truth.kernels) {
    costs.all = {1.2 + 0.25 * k, 0.55 + 0.02 * k, 0, "truth"};  // 3 us and more on 4 ranks
    costs.byCollective.clear();
    ++k;
  }
  const std::vector<MeasuredRun> runs = syntheticRuns(fittedRuns(), truth);
  const CostModel fitted = fitCostModel(runs, builtInCostModel());
  for (const char* machine : {kH200x4, kH200x2, kH200x2Procs}) {
    const MachineAccuracy accuracy = checkMachine(runs, fitted, machine);
    EXPECT_LT(accuracy.medianAbsError, 0.002) << machine;
    EXPECT_LT(std::fabs(accuracy.cells[accuracy.worst].error), 0.02) << machine;
  }
  // The kernels that ran on 2 ranks and on 4 tell the peers' part from the launch; those that ran with one
  // process and with two the process's part; the staged cells the copies' costs.
  EXPECT_NEAR(fitted.peerUs, truth.peerUs, 0.02);
  EXPECT_NEAR(fitted.processUs, truth.processUs, 0.02);
  EXPECT_NEAR(fitted.stagingCopy.launchUs, truth.stagingCopy.launchUs, 0.1);
  EXPECT_NEAR(fitted.stagingCopy.efficiency, truth.stagingCopy.efficiency, 0.01);
  EXPECT_EQ(fitted.stagingCopy.source, "fit");
  // All-reduce 2 MiB - 512 MiB staging every byte (10 cells, both placements), the all-reduce, all-gather,
  // reduce-scatter (50) and broadcast (8) staging the peers' parts, and the arena ring's runs' broadcast and reduce of
  // 2 MiB (4), which went through the windows, and the same sweeps with the ring off (50).
  EXPECT_EQ(fitted.stagingCopy.cells, 122);
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
  EXPECT_EQ(fitted.costs(Kernel::RingAllReduce).all.source, builtInCostModel().costs(Kernel::RingAllReduce).all.source);
  EXPECT_EQ(fitted.costs(Kernel::RingAllReduce).all.cells, 0);
}

TEST(PlanFit, TheSameRunsGiveTheSameModelWhateverTheBase) {
  const std::vector<MeasuredRun> runs = fittedRuns();
  CostModel other = builtInCostModel();
  other.stepUs = 9;
  other.peerUs = 7;
  other.processUs = 5;
  other.stagingCopy = {30, 0.1, 0, "other"};
  for (KernelCosts& costs : other.kernels) costs.all = {20, 0.1, 0, "other"};
  other.arenaSlotUs = 40;
  for (KernelCosts& costs : other.arenaWays) costs.all = {20, 0.1, 0, "other"};
  const CostModel a = fitCostModel(runs, builtInCostModel());
  const CostModel b = fitCostModel(runs, other);
  EXPECT_DOUBLE_EQ(a.stepUs, b.stepUs);
  EXPECT_DOUBLE_EQ(a.peerUs, b.peerUs);
  EXPECT_DOUBLE_EQ(a.processUs, b.processUs);
  EXPECT_DOUBLE_EQ(a.stagingCopy.launchUs, b.stagingCopy.launchUs);
  EXPECT_DOUBLE_EQ(a.stagingCopy.efficiency, b.stagingCopy.efficiency);
  EXPECT_DOUBLE_EQ(a.arenaSlotUs, b.arenaSlotUs);
  for (const ArenaWay way : {ArenaWay::Ring, ArenaWay::Chain}) {
    EXPECT_DOUBLE_EQ(a.costs(way).all.launchUs, b.costs(way).all.launchUs) << arenaWayName(way);
    EXPECT_DOUBLE_EQ(a.costs(way).all.efficiency, b.costs(way).all.efficiency) << arenaWayName(way);
    EXPECT_NEAR(a.costs(way).all.efficiency, builtInCostModel().costs(way).all.efficiency, 1e-9) << arenaWayName(way);
  }
  for (const KernelInfo& info : kernelRegistry()) {
    if (a.costs(info.kernel).all.cells == 0) continue;
    EXPECT_DOUBLE_EQ(a.costs(info.kernel).all.launchUs, b.costs(info.kernel).all.launchUs) << info.name;
    EXPECT_DOUBLE_EQ(a.costs(info.kernel).all.efficiency, b.costs(info.kernel).all.efficiency) << info.name;
  }
  // The built-in model is that fit (src/plan/model.json, refitted after a change of the model).
  EXPECT_NEAR(a.peerUs, builtInCostModel().peerUs, 1e-9);
  EXPECT_NEAR(a.processUs, builtInCostModel().processUs, 1e-9);
  EXPECT_NEAR(a.stagingCopy.efficiency, builtInCostModel().stagingCopy.efficiency, 1e-9);
  EXPECT_NEAR(a.arenaSlotUs, builtInCostModel().arenaSlotUs, 1e-9);
  for (const char* machine : {kH200x4, kH200x2, kH200x2Procs}) {
    const MachineAccuracy refit = checkMachine(runs, a, machine);
    const MachineAccuracy builtIn = checkMachine(runs, builtInCostModel(), machine);
    EXPECT_NEAR(refit.medianAbsError, builtIn.medianAbsError, 1e-9) << machine;
  }
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
  EXPECT_EQ(h200.machine, kH200x4);
  EXPECT_EQ(h200.cells.size(), 321u);  // 7 collectives, 8 B - 1 GiB, both placements where they exist
  EXPECT_LE(h200.medianAbsError, 0.10);
  EXPECT_LE(h200.medianAbsError, 0.025) << "was 1.7%";
  EXPECT_LE(std::fabs(h200.cells[h200.worst].error), 0.40) << "was 33%";
}

TEST(PlanAccuracy, TwoGpusOneProcessFittedWithTheFourGpuRuns) {
  const std::vector<MeasuredRun> runs = fixtureRuns("h200x2");
  const MachineAccuracy h200 = checkOne(runs, builtInCostModel());
  EXPECT_EQ(h200.machine, kH200x2);
  // All-reduce 8 B - 512 MiB by 4 and broadcast 16 - 512 MiB by 4, both placements.
  EXPECT_EQ(h200.cells.size(), 34u);
  EXPECT_LE(h200.medianAbsError, 0.10);
  EXPECT_LE(h200.medianAbsError, 0.04) << "was 3.3% (the all-reduce 3.2%, the broadcast 4.2%; the all-reduce alone "
                                          "2.3% before the broadcast joined the fit)";
  EXPECT_LE(std::fabs(h200.cells[h200.worst].error), 0.15) << "was 5.4%";
}

// The 2-rank check tells a right per-peer cost from a wrong one: with the 4-rank fixed costs kept, no peer cost
// (the model before it had one: every launch fitted on 3 peers) or twice the fitted one misses the bar on 2 GPUs.
TEST(PlanAccuracy, AWrongPeerCostMissesTheBarOnTwoGpus) {
  const std::vector<MeasuredRun> four = fixtureRuns("h200x4");
  const std::vector<MeasuredRun> two = fixtureRuns("h200x2");
  const CostModel& builtIn = builtInCostModel();
  ASSERT_GT(builtIn.peerUs, 0.2);
  for (const double peerUs : {0.0, 2 * builtIn.peerUs}) {
    const CostModel wrong = withPeerCost(builtIn, peerUs);
    EXPECT_NEAR(checkOne(four, wrong).medianAbsError, checkOne(four, builtIn).medianAbsError, 1e-9) << peerUs;
    EXPECT_GT(checkOne(two, wrong).medianAbsError, 0.10) << "peer cost " << peerUs << " us";
  }
}

TEST(PlanAccuracy, AnotherMachineTheModelWasNotFittedTo) {
  const std::vector<MeasuredRun> runs = fixtureRuns("h100x4");
  const MachineAccuracy h100 = checkOne(runs, builtInCostModel());
  EXPECT_EQ(h100.machine, "4x NVIDIA H100 80GB HBM3, one process");
  EXPECT_EQ(h100.cells.size(), 321u);
  EXPECT_LE(h100.medianAbsError, 0.10);
  EXPECT_LE(h100.medianAbsError, 0.04) << "was 3.7% (3.1% before the runs of the peers' parts joined the fit)";
  EXPECT_LE(std::fabs(h100.cells[h100.worst].error), 0.30) << "was 21%";
}

// One process per GPU (call x2's all-reduce, staged through the windows as the communicator pipelines it and on
// registered windows), fitted with the one-process runs.
TEST(PlanAccuracy, TwoGpusTwoProcessesFitted) {
  const std::vector<MeasuredRun> runs = fixtureRuns("h200x2-procs");
  const MachineAccuracy procs = checkOne(runs, builtInCostModel());
  EXPECT_EQ(procs.machine, kH200x2Procs);
  EXPECT_EQ(procs.cells.size(), 56u);
  EXPECT_LE(procs.medianAbsError, 0.10);
  EXPECT_LE(procs.medianAbsError, 0.09) << "was 7.7%";
  // The worst is a registered LL128 cell of 512 KiB, 7.0 us measured beside 5.5 us predicted.
  EXPECT_LE(std::fabs(procs.cells[procs.worst].error), 0.30) << "was 22%";
}

// The cells of `runs` that went through the staging windows (`staged`), or the others.
std::vector<MeasuredRun> cellsStaged(std::vector<MeasuredRun> runs, bool staged) {
  for (MeasuredRun& run : runs) {
    std::vector<Measurement> kept;
    for (const Measurement& cell : run.cells) {
      if (isStaged(cell.call, cell.ran, run.mode) == staged) kept.push_back(cell);
    }
    run.cells = kept;
  }
  return runs;
}

// The 2-process check tells the staging's terms from their absence: the staged cells are far off without their
// copies (as if registered) where with them they are within the bar, and each run's staging order matters: the
// serial run predicted as pipelined misses the bar, and the pipelined run predicted as serial is further off than as
// pipelined. The cells that are not
// staged (those of registered buffers, and the LL ones) are within it with the process cost; unlike call C1's runs,
// call x2's are within it without that cost too (6.7%: docs/plan.md), so no assertion says they need it.
TEST(PlanAccuracy, TwoProcessesNeedTheStagingCopiesInTheirOrder) {
  const std::vector<MeasuredRun> runs = fixtureRuns("h200x2-procs");
  const std::vector<MeasuredRun> direct = cellsStaged(runs, false);
  EXPECT_EQ(checkOne(direct, builtInCostModel()).cells.size(), 46u);
  EXPECT_LE(checkOne(direct, builtInCostModel()).medianAbsError, 0.10) << "was 9.5%";

  const std::vector<MeasuredRun> staged = cellsStaged(runs, true);
  const double pipelined = checkOne(staged, builtInCostModel()).medianAbsError;
  EXPECT_EQ(checkOne(staged, builtInCostModel()).cells.size(), 10u);  // 2 MiB - 512 MiB, both placements
  EXPECT_LE(pipelined, 0.10) << "was 6.7%";
  std::vector<MeasuredRun> unstaged = staged;
  for (MeasuredRun& run : unstaged) run.mode.registered = true;
  const double withoutCopies = checkOne(unstaged, builtInCostModel()).medianAbsError;
  EXPECT_GT(withoutCopies, 0.20) << "was 22.7% (36% on call C1's serial staging, whose copies cost twice as much)";
  EXPECT_GT(withoutCopies, 3 * pipelined);
  // The pipelined run predicted as serial staging: further off than as pipelined (11.6% against 6.7% when the model
  // was fitted to the runs staging every byte alone; 9.3% against 7.0% with the runs of the peers' parts in the fit,
  // whose copies it prices cheaper).
  std::vector<MeasuredRun> asSerial = staged;
  for (MeasuredRun& run : asSerial) run.mode.serialStaging = true;
  EXPECT_GT(checkOne(asSerial, builtInCostModel()).medianAbsError, 1.2 * pipelined) << "was 9.3% against 7.0%";

  std::vector<MeasuredRun> serial = fixtureRuns("h200x2-serial");
  for (MeasuredRun& run : serial) {
    ASSERT_TRUE(run.mode.serialStaging) << run.origin;
    run.mode.serialStaging = false;
  }
  EXPECT_GT(checkOne(serial, builtInCostModel()).medianAbsError, 0.10) << "was 11.0%";
}

// The same all-reduce staged serially (PEERLINK_COLL_STAGE_UNREGISTERED=SERIAL, in the run's settings), measured in
// the same session as the fitted runs but not fitted to: the model's serial form beside it.
TEST(PlanAccuracy, TwoProcessesSerialStagingNotFitted) {
  const std::vector<MeasuredRun> runs = fixtureRuns("h200x2-serial");
  const MachineAccuracy serial = checkOne(runs, builtInCostModel());
  EXPECT_EQ(serial.machine, kH200x2Procs);
  EXPECT_EQ(serial.cells.size(), 10u);  // 2 MiB - 512 MiB, both placements, every one staged
  EXPECT_EQ(cellsStaged(runs, true).front().cells.size(), 10u);
  EXPECT_LE(serial.medianAbsError, 0.10);
  EXPECT_LE(serial.medianAbsError, 0.03) << "was 1.5%";
  // The worst is 2 MiB out of place, 18.8 us measured where in place took 17.1.
  EXPECT_LE(std::fabs(serial.cells[serial.worst].error), 0.15) << "was 11.2%";
}

TEST(PlanAccuracy, SizesLeftOutOfTheFit) {
  const std::vector<MeasuredRun> runs = fittedRuns();
  for (const bool even : {true, false}) {
    const std::string half = even ? "fitted to the first, third, ... sizes" : "fitted to the second, fourth, ... sizes";
    const CostModel fitted = fitCostModel(sizesOf(runs, even), builtInCostModel());
    const std::vector<MeasuredRun> left = sizesOf(runs, !even);
    const MachineAccuracy four = checkMachine(left, fitted, kH200x4);
    EXPECT_GT(four.cells.size(), 150u);
    EXPECT_LE(four.medianAbsError, 0.10) << half;
    EXPECT_LE(four.medianAbsError, 0.03) << half << ": was 1.8% and 1.8%";
    const MachineAccuracy two = checkMachine(left, fitted, kH200x2);
    EXPECT_EQ(two.cells.size(), even ? 16u : 18u);
    EXPECT_LE(two.medianAbsError, 0.10) << half;
    EXPECT_LE(two.medianAbsError, 0.06) << half
                                        << ": was 2.8% and 5.2% (3.8% and 2.8% before the runs of the peers' "
                                           "parts joined the fit)";
    // Half of the 2-process cells leave the process cost and the staging copies less certain, and the other half
    // stays within the bar.
    const MachineAccuracy procs = checkMachine(left, fitted, kH200x2Procs);
    EXPECT_EQ(procs.cells.size(), even ? 154u : 178u);  // with the arena ring's runs
    EXPECT_LE(procs.medianAbsError, 0.10) << half << ": was 7.5% and 5.7% (8.9% and 7.2% before the arena ring's runs)";
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

// A launcher's world (torchrun, mpirun) records each rank's GPU as its process numbered it, 0 in every process: the
// bus ids the run saved say which of the topology's GPUs each rank had. More processes than ranks is a bad file.
TEST(PlanAccuracy, EachRanksGpuIsFoundByItsBusId) {
  const fs::path fixture = fs::path(PEERLINK_FIXTURES_DIR) / "plan" / "h200x2-procs" / "ar-procs.json";
  const MeasuredRun original = cli::loadMeasuredRun(fixture.string(), builtInCostModel());
  std::ifstream in(fixture);
  nlohmann::json document = nlohmann::json::parse(in);
  ASSERT_NE(document["device_bus_ids"][0], document["device_bus_ids"][1]);
  document["devices"] = {0, 0};
  const MeasuredRun renumbered = cli::measuredRunFromJson(document, "renumbered.json", builtInCostModel());
  EXPECT_EQ(renumbered.machine, original.machine);
  ASSERT_EQ(renumbered.cells.size(), original.cells.size());
  EXPECT_TRUE(renumbered.skipped.empty()) << renumbered.skipped;
  for (std::size_t c = 0; c < original.cells.size(); ++c) {
    const auto predicted = [](const MeasuredRun& run, std::size_t cell) {
      return predictCall(run.cells[cell].call, run.cells[cell].ran, run.fabric, run.context, run.mode,
                         builtInCostModel())
          .timeUs;
    };
    EXPECT_DOUBLE_EQ(predicted(renumbered, c), predicted(original, c)) << "cell " << c;
  }
  document["device_bus_ids"][1] = "0000:00:99.0";
  EXPECT_TRUE(testing::contains(
      testing::errorOf(ErrorCode::InvalidInput,
                       [&] { cli::measuredRunFromJson(document, "renumbered.json", builtInCostModel()); }),
      "rank 1's GPU 0000:00:99.0 is not in its topology"));
  document = nlohmann::json::parse(std::ifstream(fixture));
  document["processes"] = 3;
  EXPECT_TRUE(
      testing::contains(testing::errorOf(ErrorCode::InvalidInput,
                                         [&] { cli::measuredRunFromJson(document, "three.json", builtInCostModel()); }),
                        "processes"));
}

// A run whose ranks shared a GPU (a world of several ranks on one H200, as across virtual nodes) is named by its
// GPUs and skipped: the model gives each rank a GPU of its own. Its "nodes" object is read, not mistaken for a count.
TEST(PlanAccuracy, RanksSharingAGpuAreSkippedWithTheReason) {
  std::ifstream in(fs::path(PEERLINK_FIXTURES_DIR) / "plan" / "h200x2-procs" / "ar-procs.json");
  nlohmann::json document = nlohmann::json::parse(in);
  document["device_bus_ids"][1] = document["device_bus_ids"][0];
  document["devices"][1] = document["devices"][0];
  document["nodes"] = {{"nodes", 2}, {"ranks_per_node", 1}, {"mpi", "Open MPI v4.1.6"}};
  const fs::path path = fs::temp_directory_path() / ("peerlink-plan-shared-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << document.dump();
  const MeasuredRun run = cli::loadMeasuredRun(path.string(), builtInCostModel());
  fs::remove(path);
  EXPECT_EQ(run.machine, "2 ranks on 1x NVIDIA H200, 2 processes, 2 nodes");
  EXPECT_TRUE(run.cells.empty());
  EXPECT_TRUE(testing::contains(run.skipped, "its 2 ranks shared 1 GPU(s)")) << run.skipped;
}

// A committed run changed in one field the check reads outside the coll reader: the metadata's commit and command
// line (read with nlohmann's value(), a number there escaped as an internal error) and a recorded setting's value.
// Each is Error(InvalidInput) naming the file and the field.
TEST(PlanAccuracy, ARunsMetadataAndSettingsOfTheWrongKindNameTheFileAndTheField) {
  std::ifstream in(fs::path(PEERLINK_FIXTURES_DIR) / "plan" / "h200x2" / "ar-1p.json");
  const nlohmann::json committed = nlohmann::json::parse(in);
  const auto messageOf = [&](const nlohmann::json::json_pointer& field, const nlohmann::json& value) {
    nlohmann::json document = committed;
    document[field] = value;
    return testing::errorOf(ErrorCode::InvalidInput,
                            [&] { cli::measuredRunFromJson(document, "run.json", builtInCostModel()); });
  };
  EXPECT_EQ(messageOf(nlohmann::json::json_pointer("/generated_by/git_commit"), 482),
            "run.json: generated_by.git_commit: expected a string, got 482");
  EXPECT_EQ(messageOf(nlohmann::json::json_pointer("/generated_by/command"), {"coll", "--register"}),
            "run.json: generated_by.command: expected a string, got an array of 2 element(s)");
  const std::string setting = messageOf(nlohmann::json::json_pointer("/parameters/0"),
                                        {{"name", "PEERLINK_ALGO"}, {"source", "environment"}, {"value", "fastest"}});
  EXPECT_TRUE(testing::contains(setting, "run.json: parameters: PEERLINK_ALGO='fastest' is not valid")) << setting;

  const MeasuredRun run = cli::measuredRunFromJson(committed, "run.json", builtInCostModel());
  EXPECT_EQ(run.commit, "482b1e147cca");
  EXPECT_EQ(run.cells.size(), 28u);
}

}  // namespace
}  // namespace peerlink::plan
