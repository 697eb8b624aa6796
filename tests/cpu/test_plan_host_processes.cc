// Calls through host memory across processes (plan/processes.hpp): each process beyond the first adds
// CostModel::hostProcessUs once to every call through host memory, never to one process's calls and never to a call
// over NVLink (which pays process_us instead); the fit recovers it from synthetic runs of one process and of two, keeps
// the base model's without 2-process cells through host memory, and the built-in model with it predicts the committed
// 2-process send/recv lines (tests/fixtures/plan/h200x2-host, call h2's hs-sr-procs.json) that it predicted 11-27 %
// fast without it. Send/recv across processes takes the communicator's way (coll::stagedWayOf): past two ranks'
// exchange pair by pair through the stages, each rank's message out and the peer's in one after the other.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "coll/planned_calls.hpp"
#include "peerlink/error.hpp"
#include "plan/accuracy.hpp"
#include "plan/fit.hpp"
#include "plan/host_traffic.hpp"
#include "plan/processes.hpp"
#include "plan_model_runs.hpp"
#include "plan_runs.hpp"
#include "topology_fixture.hpp"

namespace peerlink::plan {
namespace {

namespace fs = std::filesystem;
using testing::loadTopologyFixture;

// The first n GPUs of the 4x H200 fixture, through host memory (PEERLINK_COLL_HOST_STAGED=all) or over NVLink.
struct Gpus {
  explicit Gpus(bool throughHost, int n = 2) : ranks(n) {
    const Topology topology = loadTopologyFixture("h200x4_vm");
    const Params params = throughHost ? Params::fromMap({{"PEERLINK_COLL_HOST_STAGED", "all"}}) : Params();
    std::vector<int> gpus;
    for (int g = 0; g < n; ++g) gpus.push_back(g);
    context = choiceContextFor(topology, gpus, params);
    fabric = fabricFor(topology, gpus, builtInCostModel(), context.host.forcedPairs);
  }
  Prediction predict(const Call& call, int processes, const CostModel& model) const {
    ProcessMode mode;
    mode.processes = processes;
    mode.registered = true;  // over NVLink: the kernel as in one process, plus the processes' part
    return predictCall(call, choiceFor(call, ranks, context), fabric, context, mode, model);
  }
  int ranks;
  ChoiceContext context;
  Fabric fabric;
};

CostModel withProcessCosts(double processUs, double hostProcessUs) {
  CostModel model = builtInCostModel();
  model.processUs = processUs;
  model.hostProcessUs = hostProcessUs;
  return model;
}

std::vector<MeasuredRun> hostRuns() {
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(fs::path(PEERLINK_FIXTURES_DIR) / "plan" / "h200x2-host")) {
    if (entry.path().extension() == ".json") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return cli::loadMeasuredRuns(paths, builtInCostModel());
}

MachineAccuracy machineOf(const std::vector<MeasuredRun>& runs, const CostModel& model, const std::string& name) {
  for (MachineAccuracy& machine : checkAccuracy(runs, model)) {
    if (machine.machine == name) return machine;
  }
  ADD_FAILURE() << "no cells of " << name;
  return {};
}

TEST(PlanHostProcesses, EachProcessBeyondTheFirstAddsItsPartOnceToACallThroughHostMemory) {
  const Gpus host(true);
  const CostModel model = withProcessCosts(0.7, 2.0);
  // One call of each way a 2-rank call through host memory takes.
  const std::vector<std::pair<Call, HostPath>> calls = {
      {{Collective::SendRecv, DataType::F32, kKiB, false, 0}, HostPath::Lines},
      {{Collective::AllReduce, DataType::F32, kMiB / 4, false, 0}, HostPath::Ring},
      {{Collective::Broadcast, DataType::F32, kMiB / 4, false, 0}, HostPath::Chain},
      {{Collective::AllGather, DataType::F32, 16 * kMiB, false, 0}, HostPath::PlanSteps},
  };
  for (const auto& [call, path] : calls) {
    const Prediction one = host.predict(call, 1, model);
    const Prediction two = host.predict(call, 2, model);
    const Prediction three = host.predict(call, 3, model);
    ASSERT_TRUE(one.hostPath.has_value());
    EXPECT_EQ(*one.hostPath, path) << hostPathName(path);
    EXPECT_NEAR(two.timeUs - one.timeUs, 2.0, 1e-9) << hostPathName(path);
    EXPECT_NEAR(two.fixedUs - one.fixedUs, 2.0, 1e-9) << hostPathName(path);
    EXPECT_NEAR(two.dataUs, one.dataUs, 1e-9) << hostPathName(path);
    EXPECT_NEAR(three.timeUs - one.timeUs, 4.0, 1e-9) << hostPathName(path);
    // process_us is NVLink's: it moves no call through host memory.
    EXPECT_NEAR(host.predict(call, 2, withProcessCosts(5.0, 2.0)).timeUs, two.timeUs, 1e-9) << hostPathName(path);
  }
  // A call of nothing returns at once in any number of processes.
  const Call empty{Collective::AllReduce, DataType::F32, 0, false, 0};
  EXPECT_EQ(host.predict(empty, 2, model).timeUs, 0.0);
}

TEST(PlanHostProcesses, OverNvlinkTheCallsPayProcessUsAndNeverTheHostPart) {
  const Gpus nvlink(false);
  for (const std::size_t count : {std::size_t{2}, kMiB, 64 * kMiB}) {
    const Call call{Collective::AllReduce, DataType::F32, count, false, 0};
    const Prediction one = nvlink.predict(call, 1, withProcessCosts(0.7, 2.0));
    const Prediction two = nvlink.predict(call, 2, withProcessCosts(0.7, 2.0));
    EXPECT_FALSE(two.hostPath.has_value());
    EXPECT_NEAR(two.timeUs - one.timeUs, 0.7, 1e-9) << count;
    EXPECT_NEAR(nvlink.predict(call, 2, withProcessCosts(0.7, 9.0)).timeUs, two.timeUs, 1e-9) << count;
  }
}

TEST(PlanHostProcesses, TheFitRecoversItFromRunsOfOneProcessAndTwo) {
  const std::vector<MeasuredRun> runs = hostRuns();
  // Far from the built-in figure and from the fit's prior, so that neither passes for it.
  CostModel truth = builtInCostModel();
  truth.hostProcessUs = 3.1;
  truth.costs(HostPath::PairByPair).all.efficiency = 0.55;
  truth.costs(HostPath::PairByPair).byCollective.clear();
  const CostModel fitted = fitCostModel(syntheticRuns(runs, truth), builtInCostModel());
  EXPECT_NEAR(fitted.hostProcessUs, truth.hostProcessUs, 0.05);
  // And pair by pair's efficiency from h2's large send/recv across processes.
  EXPECT_NEAR(fitted.costs(HostPath::PairByPair).all.efficiency, truth.costs(HostPath::PairByPair).all.efficiency,
              0.01);
  EXPECT_LT(machineOf(syntheticRuns(runs, truth), fitted, kTwoProcesses).medianAbsError, 0.002);
  // No cell over NVLink in several processes: process_us stays the base model's.
  EXPECT_EQ(fitted.processUs, builtInCostModel().processUs);

  // Without the 2-process runs the cells cannot show it: the base model's stays.
  std::vector<MeasuredRun> onePass;
  for (const MeasuredRun& run : runs) {
    if (run.mode.processes == 1) onePass.push_back(run);
  }
  ASSERT_EQ(onePass.size(), 7u);
  CostModel base = builtInCostModel();
  base.hostProcessUs = 0.25;
  EXPECT_EQ(fitCostModel(syntheticRuns(onePass, truth), base).hostProcessUs, 0.25);
}

// The committed 2-process send/recv lines of 1-8 KiB (5.2-5.8 us, where one process takes 3.9-4.9): within 5 % with
// the built-in model, 11-16 % fast without its process part through host memory; the one-process cells the same
// either way.
TEST(PlanHostProcesses, TheCommittedSmallSendRecvAcrossProcesses) {
  const std::vector<MeasuredRun> runs = hostRuns();
  const CostModel without = withProcessCosts(builtInCostModel().processUs, 0.0);
  EXPECT_GT(builtInCostModel().hostProcessUs, 1.0);
  const MachineAccuracy two = machineOf(runs, builtInCostModel(), kTwoProcesses);
  const MachineAccuracy twoWithout = machineOf(runs, without, kTwoProcesses);
  ASSERT_EQ(two.cells.size(), twoWithout.cells.size());
  int small = 0;
  for (std::size_t i = 0; i < two.cells.size(); ++i) {
    const Measurement& cell = *two.cells[i].cell;
    if (cell.call.collective != Collective::SendRecv || cell.size > 8 * kKiB) continue;
    ++small;
    EXPECT_LT(std::fabs(two.cells[i].error), 0.05) << cell.size;
    EXPECT_LT(twoWithout.cells[i].error, -0.10) << cell.size;
  }
  EXPECT_EQ(small, 4);
  EXPECT_LE(two.medianAbsError, 0.03);
  const MachineAccuracy one = machineOf(runs, builtInCostModel(), kOneProcess);
  const MachineAccuracy oneWithout = machineOf(runs, without, kOneProcess);
  EXPECT_EQ(one.medianAbsError, oneWithout.medianAbsError);
}

TEST(PlanHostProcesses, SendRecvAcrossProcessesGoesTheCommunicatorsWay) {
  const CostModel& model = builtInCostModel();
  const Gpus two(true);
  for (const std::size_t count : {std::size_t{256}, kMiB, 2 * kMiB, 4 * kMiB, 16 * kMiB}) {
    const Call call{Collective::SendRecv, DataType::F32, count, false, 0};
    const auto way = [&](bool acrossProcesses) {
      return *costedHostPath(coll::stagedWayOf(call.collective, count, call.type, 2, two.context.host.ringMaxBytes,
                                               two.context.host.oneKernel, acrossProcesses));
    };
    EXPECT_EQ(*two.predict(call, 1, model).hostPath, way(false)) << count;
    EXPECT_EQ(*two.predict(call, 2, model).hostPath, way(true)) << count;
  }
  // Two ranks' exchange up to 8 MiB of both in lines or the ring, alike in one process and two; past it the ring
  // shift's plans in one process, pair by pair in two; of three ranks pair by pair at every size.
  const Call exchange{Collective::SendRecv, DataType::F32, kMiB, false, 0};
  EXPECT_EQ(*two.predict(exchange, 2, model).hostPath, HostPath::Ring);
  const Call large{Collective::SendRecv, DataType::F32, 4 * kMiB, false, 0};
  EXPECT_EQ(*two.predict(large, 1, model).hostPath, HostPath::PlanSteps);
  const Prediction pairs = two.predict(large, 2, model);
  ASSERT_EQ(*pairs.hostPath, HostPath::PairByPair);
  const Gpus three(true, 3);
  EXPECT_EQ(*three.predict({Collective::SendRecv, DataType::F32, 256, false, 0}, 3, model).hostPath,
            HostPath::PairByPair);
  EXPECT_EQ(*three.predict({Collective::SendRecv, DataType::F32, 256, false, 0}, 1, model).hostPath, HostPath::Lines);
  // Each rank's 16 MiB out through its PCIe link, then the peer's 16 MiB in: both at the link's rate, one after the
  // other.
  const HostTraffic traffic = hostTraffic(large, two.fabric, two.context.host, HostPath::PairByPair);
  ASSERT_EQ(traffic.steps.size(), 2u);
  const double bytes = 16.0 * kMiB;
  double out = 0;
  double in = 0;
  for (std::size_t r = 0; r < two.fabric.resources.size(); ++r) {
    out += traffic.steps[0][r];
    in += traffic.steps[1][r];
  }
  EXPECT_DOUBLE_EQ(out, 2 * bytes);  // both ranks'
  EXPECT_DOUBLE_EQ(in, 2 * bytes);
  const double gbps = two.fabric.resources[static_cast<std::size_t>(two.fabric.toHost[0])].gbps;
  const KernelCost& cost = model.cost(HostPath::PairByPair, Collective::SendRecv);
  EXPECT_NEAR(pairs.dataUs, 2 * bytes / (gbps * 1e3) / cost.efficiency, 1e-6);
  EXPECT_NEAR(pairs.fixedUs, cost.launchUs + model.hostProcessUs, 1e-9);
}

// Call h2's 2-process send/recv of 8-64 MiB went pair by pair (predicted 16-27 % fast as the ring shift's plans of one
// process): within 6 % along that way.
TEST(PlanHostProcesses, TheCommittedLargeSendRecvAcrossProcessesPairByPair) {
  const std::vector<MeasuredRun> runs = hostRuns();
  const MachineAccuracy two = machineOf(runs, builtInCostModel(), kTwoProcesses);
  int pairs = 0;
  for (const CellCheck& check : two.cells) {
    if (check.predicted.hostPath != HostPath::PairByPair) continue;
    ++pairs;
    EXPECT_EQ(check.cell->call.collective, Collective::SendRecv);
    EXPECT_GE(check.cell->size, 8 * kMiB);
    EXPECT_LT(std::fabs(check.error), 0.06) << check.cell->size;
  }
  EXPECT_EQ(pairs, 4);
  EXPECT_GT(builtInCostModel().costs(HostPath::PairByPair).all.cells, 0);
}

TEST(PlanHostProcesses, TheModelFileCarriesItAndAnOlderOneReadsAsNone) {
  CostModel model = builtInCostModel();
  model.hostProcessUs = 1.75;
  nlohmann::json document = costModelToJson(model);
  EXPECT_EQ(costModelFromJson(document, "test").hostProcessUs, 1.75);
  document.erase("host_process_us");
  EXPECT_EQ(costModelFromJson(document, "old").hostProcessUs, 0.0);
  document["host_process_us"] = -1;
  EXPECT_THROW(costModelFromJson(document, "bad"), Error);
}

}  // namespace
}  // namespace peerlink::plan
