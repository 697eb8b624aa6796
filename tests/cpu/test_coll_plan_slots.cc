// Scratch and host stages reused over the steps (coll/plan_slots.hpp): every staged plan remapped onto slots must
// still match the closed form under the host executor's checks (a slot taken while its contents are still to be read
// gives a race or a wrong result), use no more staging than before, and for a long call stay as deep as the pipeline
// rather than as long as the call; plans outside the pattern are left as they are.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/host_executor.hpp"
#include "coll/plan.hpp"
#include "coll/plan_slots.hpp"
#include "coll/plan_staged.hpp"
#include "coll_lists.hpp"
#include "plan_test_support.hpp"
#include "staged_worlds.hpp"

namespace peerlink::coll {
namespace {

std::size_t staging(const RankLayout& rank) {
  return rank.scratchElements + rank.hostStageElements;
}

TEST(PlanSlots, EveryStagedPlanStillMatchesTheClosedForm) {
  int runs = 0;
  int shrunk = 0;
  for (int n = 2; n <= 6; ++n) {
    for (const StagedWorld& world : stagedWorlds(n)) {
      SCOPED_TRACE(world.name + ", " + std::to_string(n) + " ranks");
      for (Collective collective : kEveryCollective) {
        for (std::size_t count : {std::size_t{1}, std::size_t{1001}, std::size_t{6000}}) {
          const ReduceOp op = ReduceOp::Sum;
          const int root = static_cast<int>(count % static_cast<std::size_t>(n));
          const Plan whole = buildStagedPlan(collective, n, count, root, false, 64, DataType::F32, world.links);
          Plan slots = whole;
          ASSERT_TRUE(reuseStagingSlots(slots)) << planName(whole);
          ASSERT_NO_THROW(checkPlanLinks(slots, world.links)) << planName(slots);
          ASSERT_EQ(runAndCompare(slots, op, static_cast<std::uint32_t>(runs)), "") << planName(slots);
          for (std::size_t r = 0; r < whole.ranks.size(); ++r) {
            // (A slot is at least 16 bytes: one element's plans may stage more.)
            if (count > 1) {
              EXPECT_LE(staging(slots.ranks[r]), staging(whole.ranks[r])) << planName(slots) << " rank " << r;
            }
            // Without P2P a rank that stages a long call holds fewer of its chunks at once.
            if (count == 6000 && world.name == "no P2P" && staging(whole.ranks[r]) > 0) {
              EXPECT_LT(staging(slots.ranks[r]), staging(whole.ranks[r])) << planName(slots) << " rank " << r;
              ++shrunk;
            }
          }
          ++runs;
        }
      }
    }
  }
  EXPECT_GT(runs, 800);
  EXPECT_GT(shrunk, 100);
}

// A call 8 times longer needs no more staging: the slots follow the pipeline's depth, not the call's length.
TEST(PlanSlots, StagingFollowsThePipelineNotTheCall) {
  for (Collective collective : {Collective::AllReduce, Collective::AllGather, Collective::Broadcast}) {
    for (int n : {2, 4}) {
      const RankLinks none = RankLinks::uniform(n, PairWay::HostStaged);
      std::vector<std::size_t> most;
      for (std::size_t chunksPerBlock : {16, 128}) {
        Plan plan = buildStagedPlan(collective, n, 64 * chunksPerBlock * static_cast<std::size_t>(n), 0, false, 64,
                                    DataType::F32, none);
        ASSERT_TRUE(reuseStagingSlots(plan));
        std::size_t deepest = 0;
        for (const RankLayout& rank : plan.ranks) deepest = std::max(deepest, staging(rank));
        most.push_back(deepest);
      }
      EXPECT_EQ(most[0], most[1]) << collectiveName(collective) << " n=" << n;
      EXPECT_GT(most[0], 0u);
    }
  }
}

Transfer copyOf(int executor, BufferRef dst, BufferRef src, std::size_t count) {
  return Transfer{executor, TransferKind::Copy, dst, {src}, count, false};
}

// A hand-made plan of one rank: three chunks of 4 elements staged through its host stage, written at steps 0, 1, 2
// and each read at the next step. The first chunk's slot is free again at step 2 (its read ended with step 1), not
// at step 1, where the second chunk is written while the first is read.
Plan threeStagedChunks() {
  Plan plan;
  plan.collective = Collective::SendRecv;
  plan.nranks = 1;
  plan.count = 12;
  plan.alignElements = 4;
  RankLayout rank;
  rank.inputElements = rank.outputElements = rank.sendElements = rank.recvElements = 12;
  rank.send = {0, BufferKind::Input, 0};
  rank.recv = {0, BufferKind::Output, 0};
  rank.hostStageElements = 12;
  plan.ranks = {rank};
  plan.steps.resize(4);
  for (std::size_t c = 0; c < 3; ++c) {
    const BufferRef stage{0, BufferKind::HostStage, 4 * c};
    plan.steps[c].transfers.push_back(copyOf(0, stage, {0, BufferKind::Input, 4 * c}, 4));
    plan.steps[c + 1].transfers.push_back(copyOf(0, {0, BufferKind::Output, 4 * c}, stage, 4));
  }
  return plan;
}

TEST(PlanSlots, ASlotIsTakenAgainOnlyAfterItsLastReadsStep) {
  Plan plan = threeStagedChunks();
  ASSERT_TRUE(reuseStagingSlots(plan));
  EXPECT_EQ(plan.ranks[0].hostStageElements, 8u);  // two slots
  EXPECT_EQ(plan.steps[0].transfers[0].dst.offset, 0u);
  EXPECT_EQ(plan.steps[1].transfers[1].dst.offset, 4u);  // the first chunk is read in this step
  EXPECT_EQ(plan.steps[2].transfers[1].dst.offset, 0u);  // free again
  EXPECT_EQ(plan.steps[3].transfers[0].srcs[0].offset, 0u);
  EXPECT_NO_THROW(checkPlan(plan));
  Bytes data(48);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i);
  EXPECT_EQ(runPlanOnHost(plan, ReduceOp::Sum, {data}).front(), data);
}

TEST(PlanSlots, PlansOutsideThePatternAreLeftAsTheyAre) {
  // A read of part of what was written.
  Plan partial = threeStagedChunks();
  partial.steps[1].transfers[0].count = 2;
  Plan before = partial;
  EXPECT_FALSE(reuseStagingSlots(partial));
  EXPECT_EQ(describePlan(partial), describePlan(before));
  // A read of what no step wrote.
  Plan unwritten = threeStagedChunks();
  unwritten.steps[1].transfers[0].srcs[0].offset = 8;
  EXPECT_FALSE(reuseStagingSlots(unwritten));
  // A read in the step that writes it.
  Plan sameStep = threeStagedChunks();
  sameStep.steps[0].transfers.push_back(copyOf(0, {0, BufferKind::Output, 8}, {0, BufferKind::HostStage, 0}, 4));
  EXPECT_FALSE(reuseStagingSlots(sameStep));
  // A write over the first chunk before its read.
  Plan overwritten = threeStagedChunks();
  overwritten.steps[0].transfers.push_back(copyOf(0, {0, BufferKind::HostStage, 2}, {0, BufferKind::Input, 0}, 4));
  overwritten.ranks[0].hostStageElements = 12;
  EXPECT_FALSE(reuseStagingSlots(overwritten));
}

}  // namespace
}  // namespace peerlink::coll
