// The host executor's checks (checkPlan, executePlan), on plans broken on purpose: races within a step,
// out-of-bounds ranges, writes to the user's send buffer, buffers of the wrong size; and describePlan.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/host_executor.hpp"
#include "coll/plan.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// The executor's checks, on plans broken on purpose. Each must fail with Error(Internal) naming the step.
std::string checkError(const Plan& plan) {
  try {
    checkPlan(plan);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::Internal);
    return error.what();
  }
  return "";
}

TEST(HostExecutor, CatchesAReadWhileWritten) {
  // Two-shot with its all-gather merged into the reduce-scatter step: rank r copies shard q from rank q
  // while rank q is still reducing it.
  Plan plan = buildPlan(Collective::AllReduce, Algorithm::TwoShot, 3, 300, 0, false, 0, DataType::F32);
  ASSERT_EQ(checkError(plan), "");
  for (Transfer& transfer : plan.steps[1].transfers) plan.steps[0].transfers.push_back(transfer);
  plan.steps.pop_back();
  const std::string message = checkError(plan);
  EXPECT_NE(message.find("step 0: race on rank "), std::string::npos) << message;
  EXPECT_NE(message.find("reads it"), std::string::npos) << message;
  std::vector<HostRankBuffers> buffers = allocateHostBuffers(plan);
  EXPECT_THROW(executePlan(plan, ReduceOp::Sum, buffers), Error);
}

TEST(HostExecutor, CatchesTwoWritersAndPartialSelfOverlap) {
  Plan plan = buildPlan(Collective::Broadcast, Algorithm::OneShot, 2, 100, 0, false, 0, DataType::F32);
  Transfer second = plan.steps[0].transfers[1];
  second.dst.offset = 50;
  second.count = 10;
  second.srcs[0].offset = 0;
  plan.steps[0].transfers.push_back(second);
  const std::string message = checkError(plan);
  EXPECT_NE(message.find("race on rank 1 output[50, 60)"), std::string::npos) << message;
  EXPECT_NE(message.find("writes it while transfer"), std::string::npos) << message;

  Plan shifted = buildPlan(Collective::AllReduce, Algorithm::OneShot, 2, 100, 0, true, 0, DataType::F32);
  // In-place one-shot without its staging step: every rank overwrites what its peer reads.
  shifted.steps.erase(shifted.steps.begin());
  for (Transfer& transfer : shifted.steps[0].transfers) {
    for (int q = 0; q < 2; ++q) transfer.srcs[static_cast<std::size_t>(q)] = {q, BufferKind::Output, 0};
  }
  EXPECT_NE(checkError(shifted).find("race"), std::string::npos);
}

TEST(HostExecutor, CatchesOutOfBoundsAndWritesToTheSendBuffer) {
  Plan plan = buildPlan(Collective::AllGather, Algorithm::Ring, 3, 10, 0, false, 0, DataType::F32);
  Plan past = plan;
  past.steps[0].transfers[0].count = 11;
  EXPECT_NE(checkError(past).find("reaches past rank"), std::string::npos);
  Plan intoSend = plan;
  intoSend.steps[0].transfers[0].dst.buffer = BufferKind::Input;
  EXPECT_NE(checkError(intoSend).find("writes the user's send buffer"), std::string::npos);
  Plan badRank = plan;
  badRank.steps[0].transfers[0].srcs[0].rank = 3;
  EXPECT_NE(checkError(badRank).find("names rank 3"), std::string::npos);
  Plan twoSources = plan;
  twoSources.steps[0].transfers[0].srcs.push_back(twoSources.steps[0].transfers[0].srcs[0]);
  EXPECT_NE(checkError(twoSources).find("copies from several sources"), std::string::npos);
  std::vector<HostRankBuffers> small = allocateHostBuffers(plan);
  small[1].output.resize(3);
  try {
    executePlan(plan, ReduceOp::Sum, small);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidUsage);
  }
}

TEST(HostExecutor, DescribesPlans) {
  // Two-shot reduce of a smaller message: every rank, the root too, reduces its shard into the root's output.
  const Plan plan = buildPlan(Collective::Reduce, Algorithm::TwoShot, 3, 40, 1, false, 0, DataType::F32);
  const std::string text = describePlan(plan);
  EXPECT_NE(text.find("reduce/two_shot n=3 count=40 f32 root=1 out-of-place: 1 steps"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 0: reduce rank 1 output[0, 16) <- rank 0 input[0, 16), rank 1 input[0, 16), rank 2 "
                      "input[0, 16) (finish)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 1: reduce rank 1 output[16, 28) <- rank 0 input[16, 28)"), std::string::npos) << text;
  // From 32 MiB the non-root ranks (2, then 0) each reduce half into the root's output.
  const std::size_t count = (std::size_t{32} << 20) / 4;
  const std::string large =
      describePlan(buildPlan(Collective::Reduce, Algorithm::TwoShot, 3, count, 1, false, 0, DataType::F32));
  EXPECT_NE(large.find("rank 2: reduce rank 1 output[0, 4194304) <- rank 0 input[0, 4194304)"), std::string::npos)
      << large;
  EXPECT_NE(large.find("rank 0: reduce rank 1 output[4194304, 8388608) <- rank 0 input[4194304, 8388608)"),
            std::string::npos)
      << large;
  EXPECT_EQ(large.find("rank 1: reduce"), std::string::npos) << large;
}

}  // namespace
}  // namespace peerlink::coll
