// The model of calls through host memory (plan/host_traffic.hpp, plan/host_predict.hpp): which way a call runs where
// the GPUs lack peer access or PEERLINK_COLL_HOST_STAGED forces it, what each way puts on the GPUs' PCIe links, and
// the built-in model against the committed 2x H200 runs made through host memory (tests/fixtures/plan/h200x2-host,
// copies of bench/results/2026-11-30-h200x2-host-ring-shapes calls c5 and c6 and of 2026-11-30-h200x2-host-exchange's
// all-to-all and send/recv, calls h1 and h2): within the bar of a 10% median
// |error| per machine and per collective, and a refit of those runs gives the built-in model's costs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "error_text.hpp"
#include "peerlink/error.hpp"
#include "plan/accuracy.hpp"
#include "plan/fit.hpp"
#include "plan/host_predict.hpp"
#include "plan/host_traffic.hpp"
#include "plan/processes.hpp"
#include "plan_model_runs.hpp"
#include "plan_runs.hpp"
#include "topology_fixture.hpp"

namespace peerlink::plan {
namespace {

namespace fs = std::filesystem;
using testing::loadTopologyFixture;

std::vector<int> firstGpus(int n) {
  std::vector<int> gpus;
  for (int g = 0; g < n; ++g) gpus.push_back(g);
  return gpus;
}

Params forcedThroughHost() {
  return Params::fromMap({{"PEERLINK_COLL_HOST_STAGED", "all"}});
}

// The GPUs 0..n-1 of `topology` under `params`, as `peerlink plan` builds them.
struct World {
  ChoiceContext context;
  Fabric fabric;
};
World worldOf(const std::string& fixture, int n, const Params& params) {
  const Topology topology = loadTopologyFixture(fixture);
  World world;
  world.context = choiceContextFor(topology, firstGpus(n), params);
  world.fabric = fabricFor(topology, firstGpus(n), builtInCostModel(), world.context.host.forcedPairs);
  return world;
}

double bytesOn(const ResourceBytes& bytes, const Fabric& fabric, const std::string& name) {
  for (std::size_t r = 0; r < fabric.resources.size(); ++r) {
    if (fabric.resources[r].name == name) return bytes[r];
  }
  ADD_FAILURE() << "no resource " << name;
  return 0;
}

// A resource's bytes over every step of a call.
double totalOn(const HostTraffic& traffic, const Fabric& fabric, const std::string& name) {
  double total = 0;
  for (const ResourceBytes& step : traffic.steps) total += bytesOn(step, fabric, name);
  return total;
}

std::vector<MeasuredRun> hostRuns() {
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(fs::path(PEERLINK_FIXTURES_DIR) / "plan" / "h200x2-host")) {
    if (entry.path().extension() == ".json") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return cli::loadMeasuredRuns(paths, builtInCostModel());
}

TEST(PlanHostPaths, GpusWithoutPeerAccessGoThroughTheirPcieLinks) {
  const World rtx = worldOf("rtx4090x2", 2, Params());
  EXPECT_TRUE(rtx.fabric.throughHost);
  ASSERT_EQ(rtx.fabric.toHost.size(), 2u);
  const Resource& out = rtx.fabric.resources[static_cast<std::size_t>(rtx.fabric.toHost[1])];
  EXPECT_EQ(out.name, "GPU 1 PCIe to host");
  EXPECT_NEAR(out.gbps, 16 * 16.0 * 128 / 130 / 8, 1e-9);  // Gen4 x16, per direction

  // Peer access everywhere: nothing through host memory, unless the setting forces it.
  EXPECT_FALSE(worldOf("h200x4_vm", 4, Params()).fabric.throughHost);
  const World forced = worldOf("h200x4_vm", 4, forcedThroughHost());
  EXPECT_TRUE(forced.fabric.throughHost);
  EXPECT_EQ(forced.fabric.toHost.size(), 4u);
  const World onePair = worldOf("h200x4_vm", 4, Params::fromMap({{"PEERLINK_COLL_HOST_STAGED", "0-2"}}));
  EXPECT_TRUE(onePair.fabric.hostStaged[onePair.fabric.routeIndex(2, 0)]);
  EXPECT_FALSE(onePair.fabric.hostStaged[onePair.fabric.routeIndex(0, 1)]);
  EXPECT_FALSE(onePair.fabric.route(0, 1).empty());

  // A setting that names no pair of these ranks is refused as the communicator refuses it.
  EXPECT_TRUE(testing::contains(
      testing::errorOf(ErrorCode::InvalidUsage,
                       [] {
                         worldOf("h200x4_vm", 2, Params::fromMap({{"PEERLINK_COLL_HOST_STAGED", "0-3"}}));
                       }),
      "PEERLINK_COLL_HOST_STAGED"));
}

TEST(PlanHostPaths, EachCallTakesTheWayTheCommunicatorRunsIt) {
  const HostSettings settings;  // the defaults: the host ring to 8 MiB (64 MiB for a chain)
  const auto path = [&](Collective collective, std::size_t bytes) {
    return hostPathOf({collective, DataType::F32, bytes / 4, false, 0}, 2, settings);
  };
  EXPECT_EQ(path(Collective::AllReduce, 256 * kKiB), HostPath::Lines);
  EXPECT_EQ(path(Collective::AllReduce, 512 * kKiB), HostPath::Ring);
  EXPECT_EQ(path(Collective::AllReduce, 8 * kMiB), HostPath::Ring);
  EXPECT_EQ(path(Collective::AllReduce, 16 * kMiB), HostPath::PlanSteps);
  EXPECT_EQ(path(Collective::AllGather, 4 * kMiB), HostPath::Ring);  // 8 MiB of output
  EXPECT_EQ(path(Collective::AllGather, 8 * kMiB), HostPath::PlanSteps);
  EXPECT_EQ(path(Collective::Broadcast, 64 * kMiB), HostPath::Chain);
  EXPECT_EQ(path(Collective::Broadcast, 128 * kMiB), HostPath::PlanSteps);
  // The all-to-all of two ranks (count: a peer's block) as the exchange on the ring to 8 MiB in all; of more, plans.
  EXPECT_EQ(path(Collective::AllToAll, 512 * kKiB), HostPath::Ring);
  EXPECT_EQ(path(Collective::AllToAll, 4 * kMiB), HostPath::Ring);
  EXPECT_EQ(path(Collective::AllToAll, 8 * kMiB), HostPath::PlanSteps);
  EXPECT_EQ(hostPathOf({Collective::AllToAll, DataType::F32, 512 * kKiB / 4, false, 0}, 4, settings),
            HostPath::PlanKernel);
  // The ring shift in LL lines up to 256 KiB a message (coll::plannedPairLines), then of two ranks the exchange on the
  // ring to 8 MiB both messages counted, then the plans.
  EXPECT_EQ(path(Collective::SendRecv, 256 * kKiB), HostPath::Lines);
  EXPECT_EQ(path(Collective::SendRecv, 512 * kKiB), HostPath::Ring);
  EXPECT_EQ(path(Collective::SendRecv, 4 * kMiB), HostPath::Ring);
  EXPECT_EQ(path(Collective::SendRecv, 16 * kMiB), HostPath::PlanSteps);
  EXPECT_EQ(hostPathOf({Collective::SendRecv, DataType::F32, 512 * kKiB / 4, false, 0}, 4, settings),
            HostPath::PlanKernel);
  HostSettings noRing = settings;
  noRing.ringMaxBytes = 0;
  noRing.oneKernel = false;
  EXPECT_EQ(hostPathOf({Collective::AllReduce, DataType::F32, kMiB / 4, false, 0}, 2, noRing), HostPath::PlanSteps);
}

TEST(PlanHostPaths, TheBytesCrossTheLinksTheCodeSends) {
  const World world = worldOf("h200x4_vm", 2, forcedThroughHost());
  const HostSettings settings = world.context.host;
  const Fabric& fabric = world.fabric;
  const double n = 8 * kMiB;
  // A broadcast's chain: the root's link carries the buffer out, the other's in, nothing else.
  const HostTraffic chain =
      hostTraffic({Collective::Broadcast, DataType::F32, 8 * kMiB / 4, false, 0}, fabric, settings);
  EXPECT_EQ(chain.path, HostPath::Chain);
  EXPECT_EQ(chain.blocks, 64);
  EXPECT_DOUBLE_EQ(totalOn(chain, fabric, "GPU 0 PCIe to host"), n);
  EXPECT_DOUBLE_EQ(totalOn(chain, fabric, "GPU 1 PCIe from host"), n);
  EXPECT_DOUBLE_EQ(totalOn(chain, fabric, "GPU 0 PCIe from host"), 0);
  EXPECT_DOUBLE_EQ(totalOn(chain, fabric, "GPU 1 PCIe to host"), 0);
  // An all-reduce's rounds: 2(n-1)/n of the buffer each way on every link.
  const HostTraffic ring =
      hostTraffic({Collective::AllReduce, DataType::F32, 8 * kMiB / 4, false, 0}, fabric, settings);
  EXPECT_EQ(ring.path, HostPath::Ring);
  EXPECT_EQ(ring.blocks, 32);
  for (const char* link :
       {"GPU 0 PCIe to host", "GPU 0 PCIe from host", "GPU 1 PCIe to host", "GPU 1 PCIe from host"}) {
    EXPECT_DOUBLE_EQ(totalOn(ring, fabric, link), n) << link;
  }
  // The staged plans of a 64 MiB all-reduce: each rank's half out and in twice (the reduce-scatter's hop, the
  // all-gather's), over steps of chunks of 4 MiB.
  const HostTraffic steps =
      hostTraffic({Collective::AllReduce, DataType::F32, 64 * kMiB / 4, false, 0}, fabric, settings);
  EXPECT_EQ(steps.path, HostPath::PlanSteps);
  EXPECT_GE(steps.steps.size(), 8u + 3u);
  for (const char* link :
       {"GPU 0 PCIe to host", "GPU 0 PCIe from host", "GPU 1 PCIe to host", "GPU 1 PCIe from host"}) {
    EXPECT_DOUBLE_EQ(totalOn(steps, fabric, link), 64.0 * kMiB) << link;
  }
  // LL lines: 16 bytes for 8 of payload.
  const HostTraffic lines =
      hostTraffic({Collective::AllReduce, DataType::F32, 256 * kKiB / 4, false, 0}, fabric, settings);
  EXPECT_EQ(lines.path, HostPath::Lines);
  EXPECT_DOUBLE_EQ(totalOn(lines, fabric, "GPU 1 PCIe to host"), 2.0 * 256 * kKiB);
  // Send/recv's ring shift in lines on 3 ranks: each rank's message to the next, a 16-byte token to the other.
  const World three = worldOf("h200x4_vm", 3, forcedThroughHost());
  const HostTraffic shift =
      hostTraffic({Collective::SendRecv, DataType::F32, 64 * kKiB / 4, false, 0}, three.fabric, three.context.host);
  EXPECT_EQ(shift.path, HostPath::Lines);
  for (const char* link : {"GPU 0 PCIe to host", "GPU 2 PCIe from host"}) {
    EXPECT_DOUBLE_EQ(totalOn(shift, three.fabric, link), 2.0 * 64 * kKiB + 16) << link;
  }
}

TEST(PlanHostPaths, PredictionsNameTheWayAndTheLink) {
  const World world = worldOf("rtx4090x2", 2, Params());
  const Call call{Collective::AllReduce, DataType::F32, 64 * kMiB / 4, false, 0};
  const Prediction p = predictChosen(call, world.fabric, world.context, builtInCostModel());
  ASSERT_TRUE(p.hostPath.has_value());
  EXPECT_EQ(*p.hostPath, HostPath::PlanSteps);
  EXPECT_TRUE(testing::contains(p.bottleneck, "PCIe")) << p.bottleneck;
  EXPECT_GT(p.steps, 1);
  // The slower link (Gen4, half an H200's Gen5) takes about twice as long for the same bytes.
  const World h200 = worldOf("h200x4_vm", 2, forcedThroughHost());
  const Prediction fast = predictChosen(call, h200.fabric, h200.context, builtInCostModel());
  EXPECT_GT(p.timeUs, 1.6 * fast.timeUs);
  // One candidate: the communicator has no algorithm to choose through host memory; in place as out of place.
  const std::vector<Candidate> candidates = candidatesFor(call, world.fabric, world.context, builtInCostModel());
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_TRUE(candidates.front().chosen);
  ASSERT_TRUE(candidates.front().inPlace.has_value());
  EXPECT_DOUBLE_EQ(candidates.front().inPlace->timeUs, candidates.front().outOfPlace.timeUs);
  // Small calls are latency: LL lines.
  const Prediction small = predictChosen({Collective::Broadcast, DataType::F32, 1024, false, 0}, world.fabric,
                                         world.context, builtInCostModel());
  EXPECT_EQ(small.bottleneck, "latency");
  EXPECT_EQ(*small.hostPath, HostPath::Lines);
}

// The bar per machine and per collective, over every cell of the committed runs through host memory.
TEST(PlanHostAccuracy, CommittedRunsThroughHostMemory) {
  const std::vector<MeasuredRun> runs = hostRuns();
  ASSERT_EQ(runs.size(), 14u);
  std::map<std::string, std::vector<double>> byCollective;
  std::size_t cells = 0;
  for (const MachineAccuracy& machine : checkAccuracy(runs, builtInCostModel())) {
    EXPECT_TRUE(machine.machine == kOneProcess || machine.machine == kTwoProcesses) << machine.machine;
    EXPECT_TRUE(machine.skipped.empty()) << machine.skipped.front();
    EXPECT_LE(machine.medianAbsError, 0.10) << machine.machine;
    for (const CellCheck& cell : machine.cells) {
      ASSERT_TRUE(cell.predicted.hostPath.has_value());
      byCollective[collectiveName(cell.cell->call.collective)].push_back(std::fabs(cell.error));
    }
    cells += machine.cells.size();
  }
  EXPECT_EQ(cells, 232u);
  EXPECT_EQ(byCollective.size(), 7u);
  for (auto& [collective, errors] : byCollective) {
    std::sort(errors.begin(), errors.end());
    EXPECT_LE(errors[errors.size() / 2], 0.10) << collective;
  }
}

TEST(PlanHostAccuracy, TheBuiltInModelIsTheFitOfThoseRuns) {
  const std::vector<MeasuredRun> runs = hostRuns();
  const CostModel fitted = fitCostModel(runs, builtInCostModel());
  EXPECT_NEAR(fitted.hostStepUs, builtInCostModel().hostStepUs, 1e-6 * builtInCostModel().hostStepUs);
  EXPECT_NEAR(fitted.hostProcessUs, builtInCostModel().hostProcessUs, 1e-6 * builtInCostModel().hostProcessUs);
  for (std::size_t i = 0; i < kHostPathCount; ++i) {
    const auto path = static_cast<HostPath>(i);
    EXPECT_GT(fitted.costs(path).all.cells, 0) << hostPathName(path);
    const KernelCost& builtIn = builtInCostModel().costs(path).all;
    EXPECT_NEAR(fitted.costs(path).all.launchUs, builtIn.launchUs, 1e-6 * builtIn.launchUs) << hostPathName(path);
    EXPECT_NEAR(fitted.costs(path).all.efficiency, builtIn.efficiency, 1e-6) << hostPathName(path);
  }
  // A model file written before the host paths existed reads with their priors.
  nlohmann::json old = costModelToJson(builtInCostModel());
  old.erase("host_paths");
  old.erase("host_step_us");
  const CostModel read = costModelFromJson(old, "old");
  EXPECT_EQ(read.costs(HostPath::Ring).all.cells, 0);
}

}  // namespace
}  // namespace peerlink::plan
