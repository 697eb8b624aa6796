// Hierarchical plans (coll/hierarchical_plan.hpp) run by the host executor for 1-4 nodes x 1-8 ranks per node,
// every collective, in place and out of place, chunked and not, every flat algorithm in each scope, against the
// closed forms; which steps cross nodes; the traffic between nodes the model of `peerlink plan` assumes.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/choice_rules.hpp"
#include "coll/hierarchical_plan.hpp"
#include "coll/host_executor.hpp"
#include "coll/host_reduce.hpp"
#include "coll_lists.hpp"
#include "peerlink/error.hpp"
#include "plan_test_support.hpp"

namespace peerlink::coll {
namespace {

bool hasInPlace(Collective collective) {
  return collective != Collective::AllToAll && collective != Collective::SendRecv;
}

// Products of up to 32 factors, partial ones included, stay within f16's range (65504): 1.25^32 < 1300.
constexpr double kProductSpread = 1.25;

std::string runAndCompare(const HierarchicalPlan& h, ReduceOp op, std::uint32_t seed) {
  const std::string failure = runAndCompare(h.plan, op, seed, kProductSpread);
  if (failure.empty()) return "";
  return failure + " on " + std::to_string(h.grid.nodes) + "x" + std::to_string(h.grid.ranksPerNode) + "\n" +
         describePhases(h);
}

// Every step of an across-nodes phase is marked so, every other step is not, and the marks are right (the host
// executor refuses an unmarked step that crosses nodes).
std::string checkScopes(const HierarchicalPlan& h) {
  std::vector<int> marked(h.plan.steps.size(), -1);
  for (const Phase& phase : h.phases) {
    if (phase.calls.empty()) return "phase " + phase.name + " has no calls";
    for (const GroupCall& call : phase.calls) {
      // In the node: every member on one node; across nodes: every member on a node of its own.
      std::set<int> nodes;
      for (const int member : call.members) nodes.insert(h.grid.nodeOf(member));
      const std::size_t want = phase.scope == Scope::InNode ? 1 : call.members.size();
      if (nodes.size() != want && std::set<int>(call.members.begin(), call.members.end()).size() > 1) {
        return "phase " + phase.name + ": a call's members are not " + scopeName(phase.scope);
      }
    }
    for (std::size_t s = phase.firstStep; s < phase.endStep; ++s) {
      const bool across = phase.scope == Scope::AcrossNodes;
      if (across && !h.plan.steps[s].acrossNodes) return "step " + std::to_string(s) + " of " + phase.name;
      if (!across && !phase.withPrevious && h.plan.steps[s].acrossNodes && h.plan.steps[s].transfers.empty()) {
        return "step " + std::to_string(s) + " marked across nodes without transfers";
      }
      marked[s] = 1;
    }
  }
  for (std::size_t s = 0; s < marked.size(); ++s) {
    if (marked[s] < 0) return "step " + std::to_string(s) + " belongs to no phase";
  }
  return "";
}

class HierarchicalSweep : public ::testing::TestWithParam<Collective> {};

TEST_P(HierarchicalSweep, MatchesClosedFormOnEveryGrid) {
  const Collective collective = GetParam();
  std::vector<std::pair<DataType, ReduceOp>> typeOps;
  for (DataType type : kEveryDataType) {
    for (ReduceOp op : kEveryReduceOp) {
      if (reduceOpSupported(type, op) && (reduces(collective) || op == ReduceOp::Sum)) typeOps.emplace_back(type, op);
    }
  }
  std::vector<HierarchyAlgorithms> algorithms;
  for (Algorithm inNode : algorithmsOf(collective == Collective::AllReduce ? Collective::Reduce : collective)) {
    for (Algorithm across : algorithmsOf(collective)) algorithms.push_back({inNode, across});
  }
  std::size_t rotation = 0;
  int runs = 0;
  for (int nodes = 1; nodes <= 4; ++nodes) {
    for (int locals = 1; locals <= 8; ++locals) {
      const NodeGrid grid{nodes, locals};
      const std::set<std::size_t> counts = {0, 1, static_cast<std::size_t>(grid.size() - 1), 1001};
      for (std::size_t count : counts) {
        for (std::size_t chunk : {std::size_t{0}, std::size_t{64}}) {
          for (bool inPlace : {false, true}) {
            if (inPlace && !hasInPlace(collective)) continue;
            const auto [type, op] = typeOps[rotation % typeOps.size()];
            const HierarchyAlgorithms algorithm = algorithms[rotation % algorithms.size()];
            ++rotation;
            const int root = static_cast<int>((count + 3) % static_cast<std::size_t>(grid.size()));
            const HierarchicalPlan h =
                buildHierarchicalPlan(collective, grid, count, root, inPlace, chunk, type, algorithm);
            ASSERT_EQ(checkScopes(h), "") << describePhases(h);
            ASSERT_EQ(runAndCompare(h, op, static_cast<std::uint32_t>(rotation)), "");
            ++runs;
          }
        }
      }
    }
  }
  RecordProperty("runs", runs);
}

TEST_P(HierarchicalSweep, EveryTypeAndOpOnTwoNodesOfThree) {
  const Collective collective = GetParam();
  for (DataType type : kEveryDataType) {
    for (ReduceOp op : kEveryReduceOp) {
      if (!reduceOpSupported(type, op) || (!reduces(collective) && op != ReduceOp::Sum)) continue;
      for (bool inPlace : {false, true}) {
        if (inPlace && !hasInPlace(collective)) continue;
        const HierarchicalPlan h = buildHierarchicalPlan(collective, {2, 3}, 203, 4, inPlace, 24, type);
        ASSERT_EQ(runAndCompare(h, op, 11), "");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Collectives, HierarchicalSweep, ::testing::ValuesIn(kEveryCollective), [](const auto& param) {
  std::string name = collectiveName(param.param);
  name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
  return name;
});

std::vector<std::string> phaseNames(const HierarchicalPlan& h) {
  std::vector<std::string> names;
  for (const Phase& phase : h.phases) names.push_back(phase.name);
  return names;
}

TEST(HierarchicalPlan, ShapesAreTheIssues) {
  const NodeGrid grid{2, 4};
  using Names = std::vector<std::string>;
  EXPECT_EQ(phaseNames(buildHierarchicalPlan(Collective::AllReduce, grid, 1000, 0, false, 0, DataType::F32)),
            (Names{"reduce-scatter in the node", "all-reduce across nodes", "all-gather in the node"}));
  EXPECT_EQ(phaseNames(buildHierarchicalPlan(Collective::AllGather, grid, 100, 0, false, 0, DataType::F32)),
            (Names{"all-gather across nodes", "all-gather in the node"}));
  EXPECT_EQ(phaseNames(buildHierarchicalPlan(Collective::ReduceScatter, grid, 100, 0, false, 0, DataType::F32)),
            (Names{"reduce-scatter in the node", "reduce-scatter across nodes"}));
  EXPECT_EQ(phaseNames(buildHierarchicalPlan(Collective::Broadcast, grid, 100, 5, false, 0, DataType::F32)),
            (Names{"broadcast across nodes", "broadcast in the node"}));
  EXPECT_EQ(phaseNames(buildHierarchicalPlan(Collective::Reduce, grid, 100, 5, false, 0, DataType::F32)),
            (Names{"reduce in the node", "reduce across nodes"}));
  EXPECT_EQ(phaseNames(buildHierarchicalPlan(Collective::AllToAll, grid, 100, 0, false, 0, DataType::F32)),
            (Names{"all-to-all across nodes", "all-to-all in the node"}));
  EXPECT_EQ(phaseNames(buildHierarchicalPlan(Collective::SendRecv, grid, 100, 0, false, 0, DataType::F32)),
            (Names{"send/recv in the node", "send/recv across nodes"}));
  // One node: nothing crosses.
  for (Collective collective : kEveryCollective) {
    const HierarchicalPlan one = buildHierarchicalPlan(collective, {1, 4}, 100, 1, false, 0, DataType::F32);
    for (const Phase& phase : one.phases) EXPECT_EQ(phase.scope, Scope::InNode) << phase.name;
    for (const Step& step : one.plan.steps) EXPECT_FALSE(step.acrossNodes);
  }
}

// One rank per node: the node's calls would only copy, so each collective is one call across nodes from the
// caller's send buffer to its recv buffer, with no scratch of its own (the sweep above checks the results on every
// grid).
TEST(HierarchicalPlan, OneRankPerNodeRunsAcrossNodesAlone) {
  using Names = std::vector<std::string>;
  const NodeGrid grid{3, 1};
  for (Collective collective : kEveryCollective) {
    if (collective == Collective::SendRecv) continue;  // pairs, no phases in the node with one rank a node
    for (bool inPlace : {false, true}) {
      if (inPlace && !hasInPlace(collective)) continue;
      const HierarchicalPlan h = buildHierarchicalPlan(collective, grid, 100, 1, inPlace, 0, DataType::F32);
      std::string name = collectiveName(collective);
      std::replace(name.begin(), name.end(), '_', '-');
      EXPECT_EQ(phaseNames(h), (Names{name + " across nodes"})) << describePhases(h);
      ASSERT_EQ(h.phases.size(), 1u);
      ASSERT_EQ(h.phases[0].calls.size(), 1u);
      const GroupCall& call = h.phases[0].calls[0];
      EXPECT_EQ(call.members, (std::vector<int>{0, 1, 2}));
      EXPECT_EQ(call.count, 100u);
      EXPECT_EQ(call.finishes, reduces(collective)) << name;
      if (!inPlace) {
        EXPECT_EQ(call.sends[0].buffer, BufferKind::Input) << name;
        EXPECT_EQ(call.recvs[0].buffer, BufferKind::Output) << name;
      }
      // Scratch: only what the call's own flat plan takes.
      const Plan flat = buildPlan(collective, call.algorithm, 3, 100, call.root, call.inPlace, 0, DataType::F32);
      for (std::size_t r = 0; r < 3; ++r) {
        EXPECT_EQ(h.plan.ranks[r].scratchElements, flat.ranks[r].scratchElements) << name << " rank " << r;
      }
    }
  }
}

// The calls across nodes run what the transport runs (acrossNodesAlgorithm): one shot where it moves the ring's
// bytes in one step (an all-reduce across 2 nodes, a reduce-scatter across up to 8), whose reductions a copy out can
// make; the ring otherwise. The same whether the node has one rank or several.
TEST(HierarchicalPlan, CallsAcrossNodesRunOneShotWhereItMovesTheRingsBytes) {
  const auto across = [](Collective collective, NodeGrid grid) {
    const HierarchicalPlan h = buildHierarchicalPlan(collective, grid, 4096, 0, false, 0, DataType::F32);
    std::vector<Algorithm> algorithms;
    for (const Phase& phase : h.phases) {
      if (phase.scope != Scope::AcrossNodes) continue;
      for (const GroupCall& call : phase.calls) algorithms.push_back(call.algorithm);
    }
    EXPECT_FALSE(algorithms.empty()) << collectiveName(collective) << " " << grid.nodes << " x " << grid.ranksPerNode;
    const bool alike =
        std::all_of(algorithms.begin(), algorithms.end(), [&](Algorithm a) { return a == algorithms[0]; });
    EXPECT_TRUE(alike) << collectiveName(collective);
    return algorithms.empty() ? Algorithm::Auto : algorithms[0];
  };
  for (const int perNode : {1, 2}) {
    EXPECT_EQ(across(Collective::AllReduce, {2, perNode}), Algorithm::OneShot) << perNode;
    EXPECT_EQ(across(Collective::AllReduce, {3, perNode}), Algorithm::Ring) << perNode;
    EXPECT_EQ(across(Collective::ReduceScatter, {2, perNode}), Algorithm::OneShot) << perNode;
    EXPECT_EQ(across(Collective::ReduceScatter, {8, perNode}), Algorithm::OneShot) << perNode;
    EXPECT_EQ(across(Collective::ReduceScatter, {9, perNode}), Algorithm::Ring) << perNode;
    EXPECT_EQ(across(Collective::AllGather, {2, perNode}), Algorithm::Ring) << perNode;
    EXPECT_EQ(across(Collective::Reduce, {2, perNode}), Algorithm::Ring) << perNode;
  }
  EXPECT_EQ(acrossNodesAlgorithm(Collective::AllToAll, 4), Algorithm::OneShot);  // its only algorithm
}

// The all-reduce's rail calls: local rank l's shard of the count, in place on its recv, ring, finishing (Avg
// divides by every rank there); the in-node reduce does not finish; what the communicator will call.
TEST(HierarchicalPlan, AllReduceCallsNameTheShards) {
  const NodeGrid grid{3, 2};
  const HierarchicalPlan h = buildHierarchicalPlan(Collective::AllReduce, grid, 1000, 0, false, 0, DataType::F32);
  ASSERT_EQ(h.phases.size(), 3u);
  const Phase& across = h.phases[1];
  ASSERT_EQ(across.calls.size(), 2u);
  const GroupCall& rail1 = across.calls[1];
  EXPECT_EQ(rail1.members, (std::vector<int>{1, 3, 5}));
  EXPECT_EQ(rail1.collective, Collective::AllReduce);
  EXPECT_EQ(rail1.algorithm, Algorithm::Ring);
  EXPECT_EQ(rail1.count, 500u);
  EXPECT_TRUE(rail1.inPlace);
  EXPECT_EQ(rail1.recvs[1].rank, 3);
  EXPECT_EQ(rail1.recvs[1].buffer, BufferKind::Output);
  EXPECT_EQ(rail1.recvs[1].offset, 500u);
  EXPECT_TRUE(rail1.finishes);
  EXPECT_EQ(groupReduceOp(rail1, ReduceOp::Avg), ReduceOp::Avg);
  EXPECT_EQ(groupAvgDivisor(rail1, grid), 6);
  const GroupCall& reduce = h.phases[0].calls[0];
  EXPECT_FALSE(reduce.finishes);
  EXPECT_EQ(groupReduceOp(reduce, ReduceOp::Avg), ReduceOp::Sum);
  EXPECT_EQ(groupAvgDivisor(reduce, grid), 1);
  const std::string text = describePhases(h);
  EXPECT_NE(text.find("phase 1 across nodes (all-reduce across nodes)"), std::string::npos) << text;
  EXPECT_NE(text.find("all_reduce ring of ranks 1, 3, 5: count 500, in place, finishes"), std::string::npos) << text;
}

// What crosses nodes is what src/plan/hierarchy.cc charges the network for (per rank, the ring's 2 (N-1)/N of
// the shard for all-reduce; (N-1) blocks for all-gather and reduce-scatter; (N-1) G blocks for all-to-all).
TEST(HierarchicalPlan, TrafficBetweenNodesIsTheModels) {
  const NodeGrid grid{4, 2};
  const std::size_t count = 8000;
  const auto sentBy = [&](Collective collective, int rank) {
    const HierarchicalPlan h = buildHierarchicalPlan(collective, grid, count, 0, false, 0, DataType::F32);
    return elementsSentAcrossNodes(h.plan)[static_cast<std::size_t>(rank)];
  };
  const std::size_t shard = count / 2;
  EXPECT_EQ(sentBy(Collective::AllReduce, 3), 2 * 3 * shard / 4);
  EXPECT_EQ(sentBy(Collective::AllGather, 3), 3 * count);
  EXPECT_EQ(sentBy(Collective::ReduceScatter, 3), 3 * count);
  EXPECT_EQ(sentBy(Collective::AllToAll, 3), 3 * 2 * count);
  // Rooted calls: only the root's rail carries data; the ring broadcast sends the count once per hop.
  EXPECT_EQ(sentBy(Collective::Broadcast, 0), count);
  EXPECT_EQ(sentBy(Collective::Broadcast, 1), 0u);
  // The ring shift: only the last rank of each node sends to another node.
  EXPECT_EQ(sentBy(Collective::SendRecv, 1), count);
  EXPECT_EQ(sentBy(Collective::SendRecv, 0), 0u);
}

TEST(HierarchicalPlan, RefusesBadInput) {
  EXPECT_THROW(buildHierarchicalPlan(Collective::AllReduce, {0, 2}, 10, 0, false, 0, DataType::F32), Error);
  EXPECT_THROW(buildHierarchicalPlan(Collective::AllReduce, {2, 0}, 10, 0, false, 0, DataType::F32), Error);
  EXPECT_THROW(buildHierarchicalPlan(Collective::Broadcast, {2, 2}, 10, 4, false, 0, DataType::F32), Error);
  EXPECT_THROW(buildHierarchicalPlan(Collective::AllToAll, {2, 2}, 10, 0, true, 0, DataType::F32), Error);
  // A step that crosses nodes without saying so is the host executor's error.
  HierarchicalPlan h = buildHierarchicalPlan(Collective::AllGather, {2, 2}, 10, 0, false, 0, DataType::F32);
  for (Step& step : h.plan.steps) step.acrossNodes = false;
  try {
    checkPlan(h.plan);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("moves data between nodes in a step not marked across nodes"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace peerlink::coll
