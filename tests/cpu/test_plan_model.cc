// `peerlink plan`'s model (src/plan/): the fabric's resources from topology fixtures, the bytes a plan puts on
// them against closed forms, the time formula, the candidates beside chooseCollective, and the hierarchical plans
// across nodes against their textbook costs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "error_text.hpp"
#include "peerlink/error.hpp"
#include "plan/fabric_model.hpp"
#include "plan/hierarchy.hpp"
#include "plan/predict.hpp"
#include "topology_fixture.hpp"

namespace peerlink::plan {
namespace {

using testing::loadTopologyFixture;

constexpr double kNvlink4Port = 18 * 26.5625;  // GB/s per direction through NVSwitch
constexpr std::size_t kMiB = 1 << 20;

// Every kernel free (no launch, full efficiency) and no step or peer cost: predictions are the plans' data time
// alone.
CostModel unitModel() {
  CostModel model;
  model.stepUs = 0;
  model.peerUs = 0;
  for (KernelCosts& costs : model.kernels) costs.all = {0, 1, 0, "test"};
  model.memoryGBps["NVIDIA H200"] = 4800;
  model.memoryGBps["NVIDIA H100 80GB HBM3"] = 3350;
  return model;
}

std::vector<int> firstGpus(int n) {
  std::vector<int> gpus;
  for (int g = 0; g < n; ++g) gpus.push_back(g);
  return gpus;
}

ChoiceContext contextFor(const Topology& topology, int n) {
  return choiceContextFor(topology, firstGpus(n), Params());
}

CollectiveChoice forcedChoice(const Topology& topology, Collective collective, std::size_t count, Algorithm algorithm,
                              int n = 4) {
  return choiceFor({collective, DataType::F32, count, false, 0}, n, contextFor(topology, n), algorithm);
}

// Microseconds for `bytes` at `gbps`.
double us(double bytes, double gbps) {
  return bytes / (gbps * 1e3);
}

const Resource& named(const Fabric& fabric, const std::string& name) {
  const auto found =
      std::find_if(fabric.resources.begin(), fabric.resources.end(), [&](const Resource& r) { return r.name == name; });
  EXPECT_NE(found, fabric.resources.end()) << name;
  return *found;
}

TEST(PlanFabric, NvswitchPortsOutAndInPerGpu) {
  const Fabric fabric = fabricFor(loadTopologyFixture("h200x4_vm"), firstGpus(4), unitModel());
  EXPECT_EQ(fabric.resources.size(), 12u);  // memory, NVLink out and NVLink in of each GPU
  EXPECT_DOUBLE_EQ(named(fabric, "GPU 2 NVLink out").gbps, kNvlink4Port);
  EXPECT_DOUBLE_EQ(named(fabric, "GPU 0 memory").gbps, 4800);
  const std::vector<int>& route = fabric.route(0, 1);
  ASSERT_EQ(route.size(), 2u);  // through NVSwitch: the ports only
  EXPECT_EQ(fabric.resources[static_cast<std::size_t>(route[0])].name, "GPU 0 NVLink out");
  EXPECT_EQ(fabric.resources[static_cast<std::size_t>(route[1])].name, "GPU 1 NVLink in");
  EXPECT_GT(fabric.hostLinkGBps[0], 60);  // PCIe Gen5 x16
}

TEST(PlanFabric, PcieSwitchUplinkSharedByTheGpusBelowIt) {
  // dual_socket_pcie: GPU 1 and GPU 2 sit below one switch (0000:04:00.0) under 0000:02:01.0, GPU 0 elsewhere.
  const Fabric fabric = fabricFor(loadTopologyFixture("dual_socket_pcie"), firstGpus(3), unitModel());
  const std::vector<int>& from1 = fabric.route(1, 0);
  const std::vector<int>& from2 = fabric.route(2, 0);
  std::vector<std::string> names;  // the resources both flows cross
  for (const int r : from1) {
    if (std::find(from2.begin(), from2.end(), r) != from2.end()) {
      names.push_back(fabric.resources[static_cast<std::size_t>(r)].name);
    }
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "PCIe 0000:02:01.0 up"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "GPU 0 PCIe in"), names.end());
  // Between GPU 1 and GPU 2 the flow stays below their switch.
  for (const int r : fabric.route(1, 2)) {
    EXPECT_NE(fabric.resources[static_cast<std::size_t>(r)].name, "PCIe 0000:02:01.0 up");
  }
}

TEST(PlanFabric, PairsWithoutPeerAccessGoThroughHostMemoryAndUnknownSpeedsAreRefused) {
  // dual_socket_pcie: GPU 3 has no peer access: every call goes through host memory (plan/host_traffic.hpp), the
  // pairs with peer access keep their routes for the staged plans' direct hops.
  const Fabric mixed = fabricFor(loadTopologyFixture("dual_socket_pcie"), firstGpus(4), unitModel());
  EXPECT_TRUE(mixed.throughHost);
  EXPECT_TRUE(mixed.hostStaged[mixed.routeIndex(0, 3)]);
  EXPECT_TRUE(mixed.route(0, 3).empty());
  EXPECT_FALSE(mixed.route(1, 2).empty());
  EXPECT_EQ(mixed.toHost.size(), 4u);
  Topology unknown = loadTopologyFixture("h200x4_vm");
  for (GpuPair& pair : unknown.pairs) pair.expectedGBps = 0;
  const std::string speed =
      testing::errorOf(ErrorCode::InvalidInput, [&] { fabricFor(unknown, firstGpus(4), unitModel()); });
  EXPECT_TRUE(testing::contains(speed, "does not say how fast"));
  Topology noPcie = loadTopologyFixture("rtx4090x2");
  for (Gpu& gpu : noPcie.gpus) gpu.pcie.gen = 0;
  const std::string pcie =
      testing::errorOf(ErrorCode::InvalidInput, [&] { fabricFor(noPcie, firstGpus(2), unitModel()); });
  EXPECT_TRUE(testing::contains(pcie, "GPU 0: the topology does not say how fast its PCIe link is"));
}

TEST(PlanTraffic, TwoShotAllReduceMovesThreeQuartersTwice) {
  const Topology topology = loadTopologyFixture("h200x4_vm");
  const Fabric fabric = fabricFor(topology, firstGpus(4), unitModel());
  const std::size_t count = 4 * kMiB;  // 16 MiB of f32
  const double bytes = 4.0 * count;
  const CollectiveChoice direct = forcedChoice(topology, Collective::AllReduce, count, Algorithm::TwoShot);
  ASSERT_EQ(direct.kernel, Kernel::TwoShot);
  const CollectiveChoice choice = forcedChoice(topology, Collective::AllReduce, count, Algorithm::Auto);
  ASSERT_EQ(choice.kernel, Kernel::PushReduce);  // AUTO pushes from 16 MiB on a mesh
  const Prediction p =
      predictChoice({Collective::AllReduce, DataType::F32, count, false, 0}, direct, fabric, unitModel());
  EXPECT_EQ(p.steps, 2);
  EXPECT_NEAR(p.dataUs, 2 * us(0.75 * bytes, kNvlink4Port), 1e-9);
  EXPECT_EQ(p.bottleneck, "GPU 0 NVLink out");
  EXPECT_EQ(p.phase, "step 1 of 2 (reductions)");
  // The push moves the same bytes over the links in its phases 0 and 2; its phase 1 reduces locally.
  const Prediction push =
      predictChoice({Collective::AllReduce, DataType::F32, count, false, 0}, choice, fabric, unitModel());
  EXPECT_EQ(push.steps, 3);
  EXPECT_NEAR(push.dataUs, 2 * us(0.75 * bytes, kNvlink4Port) + us(bytes / 4 * 5, 4800), 1e-6);
}

TEST(PlanTraffic, RingBroadcastIsPacedByOneLinkPlusItsFill) {
  const Topology topology = loadTopologyFixture("h200x4_vm");
  const Fabric fabric = fabricFor(topology, firstGpus(4), unitModel());
  const std::size_t count = 16 * kMiB;  // 64 MiB
  const double bytes = 4.0 * count;
  const CollectiveChoice choice = forcedChoice(topology, Collective::Broadcast, count, Algorithm::Ring);
  ASSERT_EQ(choice.kernel, Kernel::RingBroadcast);
  const Prediction p =
      predictChoice({Collective::Broadcast, DataType::F32, count, false, 0}, choice, fabric, unitModel());
  // Three hops of the whole message, pipelined in 1 MiB grains: one link's time and two grains of fill. The root's
  // local copy (out of place) goes through its memory beside the first hop.
  const double link = us(bytes, kNvlink4Port);
  const double firstHop = std::max(link, us(2 * bytes, 4800));
  EXPECT_NEAR(p.dataUs, link + (firstHop + 2 * link - link) / 64, 1e-6);
  EXPECT_EQ(p.steps, 1);
  EXPECT_EQ(p.phase, "the pipeline of 3 steps");
}

TEST(PlanTraffic, LlLinesCarryTwiceTheirPayload) {
  const Topology topology = loadTopologyFixture("h200x4_vm");
  const Fabric fabric = fabricFor(topology, firstGpus(4), unitModel());
  const std::size_t count = 1024;  // 4 KiB per rank
  const CollectiveChoice choice = forcedChoice(topology, Collective::AllGather, count, Algorithm::Auto);
  ASSERT_EQ(choice.kernel, Kernel::LlOneShot);
  for (const bool inPlace : {false, true}) {
    const Prediction p =
        predictChoice({Collective::AllGather, DataType::F32, count, inPlace, 0}, choice, fabric, unitModel());
    EXPECT_NEAR(p.dataUs, us(2 * 3 * 4.0 * count, kNvlink4Port), 1e-9) << inPlace;
    EXPECT_EQ(p.steps, 1);
  }
}

TEST(PlanTraffic, ARangeReadOnceAndStoredToSeveralRanksCountsOnce) {
  // Broadcast two-shot: each non-root rank reads its third of the root's buffer once and stores it to every
  // non-root rank; the root's port carries the message once, not three times.
  const Topology topology = loadTopologyFixture("h200x4_vm");
  const Fabric fabric = fabricFor(topology, firstGpus(4), unitModel());
  const std::size_t count = 3 * kMiB;
  const CollectiveChoice choice = forcedChoice(topology, Collective::Broadcast, count, Algorithm::TwoShot);
  ASSERT_EQ(choice.kernel, Kernel::Copy);
  const Prediction p =
      predictChoice({Collective::Broadcast, DataType::F32, count, true, 0}, choice, fabric, unitModel());
  EXPECT_NEAR(p.dataUs, us(4.0 * count, kNvlink4Port), 1e-9);
  EXPECT_EQ(p.bottleneck, "GPU 0 NVLink out");
}

TEST(PlanPredict, TimeIsLaunchPeersStepsAndDataOverEfficiency) {
  const Topology topology = loadTopologyFixture("h200x4_vm");
  const Fabric fabric = fabricFor(topology, firstGpus(4), unitModel());
  CostModel model = unitModel();
  model.stepUs = 1.5;
  model.peerUs = 0.25;
  model.costs(Kernel::TwoShot).all = {2, 0.5, 0, "test"};
  model.costs(Kernel::TwoShot).byCollective[Collective::Reduce] = {9, 0.25, 0, "test"};
  const std::size_t count = 1 * kMiB;
  CollectiveChoice choice = forcedChoice(topology, Collective::AllReduce, count, Algorithm::TwoShot);
  ASSERT_EQ(choice.kernel, Kernel::TwoShot);
  const Call call{Collective::AllReduce, DataType::F32, count, false, 0};
  const Prediction unit = predictChoice(call, choice, fabric, unitModel());
  const Prediction p = predictChoice(call, choice, fabric, model);
  EXPECT_NEAR(p.timeUs, 2 + 3 * 0.25 + 1.5 + unit.dataUs / 0.5, 1e-9);
  EXPECT_NEAR(p.fixedUs, 4.25, 1e-12);
  // Each peer a rank waits on adds its part: two ranks of the same machine have one.
  const Fabric two = fabricFor(topology, firstGpus(2), unitModel());
  const Prediction pair =
      predictChoice(call, forcedChoice(topology, Collective::AllReduce, count, Algorithm::TwoShot, 2), two, model);
  EXPECT_NEAR(pair.fixedUs, 2 + 0.25 + 1.5 * (pair.steps - 1), 1e-12);
  // A collective's own costs win over the kernel's.
  EXPECT_DOUBLE_EQ(model.cost(Kernel::TwoShot, Collective::Reduce).launchUs, 9);
  EXPECT_DOUBLE_EQ(model.cost(Kernel::TwoShot, Collective::AllReduce).launchUs, 2);
  // Latency-bound where the fixed costs outweigh the data.
  const Prediction tiny = predictChoice({Collective::AllReduce, DataType::F32, 64, false, 0}, choice, fabric, model);
  EXPECT_EQ(tiny.bottleneck, "latency");
  const Prediction none = predictChoice({Collective::AllReduce, DataType::F32, 0, false, 0}, choice, fabric, model);
  EXPECT_EQ(none.timeUs, 0);
  EXPECT_EQ(none.bottleneck, "nothing to move");
}

TEST(PlanModel, APeerCostIsReadWrittenAndNeverNegative) {
  nlohmann::json document = costModelToJson(builtInCostModel());
  EXPECT_DOUBLE_EQ(costModelFromJson(document, "test").peerUs, builtInCostModel().peerUs);
  // A model written before the per-peer cost: its launch costs are whole.
  document.erase("peer_us");
  EXPECT_EQ(costModelFromJson(document, "test").peerUs, 0);
  document["peer_us"] = -0.5;
  EXPECT_TRUE(testing::contains(testing::errorOf(ErrorCode::InvalidInput, [&] { costModelFromJson(document, "m"); }),
                                "m: the model: peer_us = -0.5 is not a non-negative number"));
}

TEST(PlanPredict, CandidatesAreEveryAlgorithmOnceTheChosenFirst) {
  const Topology topology = loadTopologyFixture("h200x4_vm");
  const Fabric fabric = fabricFor(topology, firstGpus(4), builtInCostModel());
  const ChoiceContext context = contextFor(topology, 4);
  for (const std::size_t count : {std::size_t{2}, 4 * kMiB, 64 * kMiB}) {  // 8 B, 16 MiB, 256 MiB per rank
    const Call call{Collective::AllReduce, DataType::F32, count, false, 0};
    const std::vector<Candidate> candidates = candidatesFor(call, fabric, context, builtInCostModel());
    ASSERT_FALSE(candidates.empty());
    const CollectiveChoice chosen = choiceFor(call, 4, context);
    EXPECT_TRUE(candidates.front().chosen);
    EXPECT_EQ(candidates.front().outOfPlace.kernel, chosen.kernel);
    EXPECT_EQ(std::count_if(candidates.begin(), candidates.end(), [](const Candidate& c) { return c.chosen; }), 1);
    std::set<std::pair<Algorithm, Kernel>> seen;
    std::set<Algorithm> algorithms;
    for (const Candidate& c : candidates) {
      EXPECT_TRUE(seen.insert({c.choice.algorithm, c.choice.kernel}).second);
      algorithms.insert(c.choice.algorithm);
      ASSERT_TRUE(c.inPlace.has_value());
      EXPECT_GT(c.outOfPlace.timeUs, 0);
    }
    // One-shot, two-shot and ring; at 8 B a forced ring runs in LL lines, as AUTO does (one candidate).
    EXPECT_EQ(algorithms.size(), count == 2 ? 2u : 3u) << count;
  }
  const std::vector<Candidate> sendRecv =
      candidatesFor({Collective::SendRecv, DataType::F32, 1024, false, 0}, fabric, context, builtInCostModel());
  ASSERT_EQ(sendRecv.size(), 1u);
  EXPECT_FALSE(sendRecv.front().inPlace.has_value());
}

TEST(PlanPredict, MoreRanksThroughOnePortTakeLonger) {
  // The same per-rank message on 8 ranks of NVSwitch puts 7/8 of the data through each port where 4 put 3/4.
  const Topology topology = loadTopologyFixture("h100x8_nvswitch");
  const std::size_t count = 64 * kMiB;
  const Call call{Collective::AllGather, DataType::F32, count / 8, false, 0};
  const Fabric eight = fabricFor(topology, firstGpus(8), unitModel());
  const Prediction p = predictChoice(
      call, forcedChoice(topology, Collective::AllGather, count / 8, Algorithm::OneShot, 8), eight, unitModel());
  EXPECT_NEAR(p.dataUs, us(7 * 4.0 * count / 8, kNvlink4Port), 1e-6);
}

Network network(int nodes, double gbps, double latency, int nics = 0) {
  Network n;
  n.nodes = nodes;
  n.nicGbps = gbps;
  n.nicLatencyUs = latency;
  n.nicsPerNode = nics;
  return n;
}

TEST(PlanHierarchy, AllReduceAcrossNodesAsRingAndRecursiveDoubling) {
  const Topology topology = loadTopologyFixture("h100x8_nvswitch");
  const Fabric node = fabricFor(topology, firstGpus(8), builtInCostModel());
  const ChoiceContext context = contextFor(topology, 8);
  const std::size_t count = 64 * kMiB;  // 256 MiB per rank
  const Call call{Collective::AllReduce, DataType::F32, count, false, 0};
  const std::vector<HierarchicalPrediction> shapes =
      predictAcrossNodes(call, node, context, builtInCostModel(), network(4, 400, 3));
  ASSERT_EQ(shapes.size(), 2u);
  const double shardBytes = 4.0 * count / 8;
  const HierarchicalPrediction& ring = shapes[0];
  ASSERT_EQ(ring.phases.size(), 3u);
  EXPECT_EQ(ring.phases[1].name, "all-reduce across nodes (ring)");
  EXPECT_NEAR(ring.phases[1].timeUs, 6 * 3 + us(1.5 * shardBytes, 50), 1e-6);
  EXPECT_EQ(ring.phases[1].bottleneck, "NIC (50 GB/s per direction, 1 GPU per NIC)");
  const HierarchicalPrediction& doubling = shapes[1];
  EXPECT_NEAR(doubling.phases[1].timeUs, 2 * 3 + us(2 * shardBytes, 50), 1e-6);
  EXPECT_NEAR(ring.timeUs, ring.phases[0].timeUs + ring.phases[1].timeUs + ring.phases[2].timeUs, 1e-9);
  // The phases in the node are the node's own predictions for the kernels it would choose.
  const Prediction scatter =
      predictChosen({Collective::ReduceScatter, DataType::F32, count / 8, false, 0}, node, context, builtInCostModel());
  EXPECT_NEAR(ring.phases[0].timeUs, scatter.timeUs, 1e-9);
  EXPECT_TRUE(ring.fastest);  // large: the ring moves less
  EXPECT_FALSE(doubling.fastest);
  // Small: latency decides, and recursive doubling's log2(4) = 2 messages beat the ring's 6.
  const std::vector<HierarchicalPrediction> small = predictAcrossNodes(
      {Collective::AllReduce, DataType::F32, 2, false, 0}, node, context, builtInCostModel(), network(4, 400, 3));
  EXPECT_TRUE(small[1].fastest);
  EXPECT_EQ(small[1].phases[1].bottleneck, "network latency");
}

TEST(PlanHierarchy, SharedNicsAndNarrowPcieBoundTheFlows) {
  const Topology topology = loadTopologyFixture("h100x8_nvswitch");
  const Fabric node = fabricFor(topology, firstGpus(8), builtInCostModel());
  const ChoiceContext context = contextFor(topology, 8);
  const Call call{Collective::AllGather, DataType::F32, 16 * kMiB, false, 0};
  const auto across = [&](const Network& net) {
    return predictAcrossNodes(call, node, context, builtInCostModel(), net)[0].phases[0];
  };
  const PhaseTime shared = across(network(2, 400, 0, 2));  // 4 GPUs per NIC
  EXPECT_NEAR(shared.timeUs, us(4.0 * 16 * kMiB, 50.0 / 4), 1e-6);
  EXPECT_EQ(shared.bottleneck, "NIC (50 GB/s per direction, 4 GPUs per NIC)");
  // A broadcast sends across nodes from one GPU of a node: it has its NIC to itself.
  const PhaseTime rooted = predictAcrossNodes({Collective::Broadcast, DataType::F32, 16 * kMiB, false, 0}, node,
                                              context, builtInCostModel(), network(2, 400, 0, 2))[0]
                               .phases[0];
  EXPECT_NEAR(rooted.timeUs, us(4.0 * 16 * kMiB, 50.0), 1e-6);
  EXPECT_EQ(rooted.bottleneck, "NIC (50 GB/s per direction, 1 GPU per NIC)");
  const PhaseTime pcie = across(network(2, 3200, 0));  // 400 GB/s NICs: the GPUs' PCIe Gen5 x16 links bound
  EXPECT_NE(pcie.bottleneck.find("GPU PCIe link to the NIC"), std::string::npos) << pcie.bottleneck;
  EXPECT_NEAR(pcie.timeUs, us(4.0 * 16 * kMiB, node.hostLinkGBps[0]), 1e-6);
}

TEST(PlanHierarchy, NetworkOutsideItsRangeIsAUsageError) {
  for (const Network& bad : {network(0, 400, 3), network(-2, 400, 3), network(2, -400, 3), network(2, 0, 3),
                             network(2, 1e9, 3), network(2, std::nan(""), 3), network(2, 400, -1),
                             network(2, 400, std::nan("")), network(2, 400, 3, -1), network(200000, 400, 3)}) {
    try {
      validateNetwork(bad);
      ADD_FAILURE() << bad.nodes << " nodes, " << bad.nicGbps << " Gb/s, " << bad.nicLatencyUs << " us accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::InvalidUsage) << error.what();
    }
  }
  EXPECT_NO_THROW(validateNetwork(network(1, 0, 0)));  // one node: no network
  EXPECT_NO_THROW(validateNetwork(network(64, 400, 2.5)));
}

}  // namespace
}  // namespace peerlink::plan
