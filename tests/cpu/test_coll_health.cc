// The error a communicator throws for its kernels' stall records (coll/comm_health.hpp, stallError): earliest first,
// the ranks and step named, an aborted communicator told apart from a deadline, ranks that called differently named
// as the caller's error, and a ring's wait said to be possibly another's echo.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/comm_health.hpp"
#include "kernels/coll_kernels.cuh"
#include "peerlink/error.hpp"
#include "peerlink/status.h"

namespace peerlink::coll {
namespace {

CommState threeRanks() {
  CommState state;
  state.nranks = 3;
  state.devices = {0, 1, 2};
  state.world.localRanks = {0, 1, 2};
  state.timeoutNs = 10'000'000'000ull;
  return state;
}

StallReport stall(int rank, int peer, int step, unsigned long long timeNs, int status = PEERLINK_STATUS_TIMEOUT) {
  StallReport report;
  report.rank = rank;
  report.record.peer = peer;
  report.record.step = step;
  report.record.timeNs = timeNs;
  report.record.status = status;
  report.record.seq = 7;
  report.record.collective = static_cast<int>(Collective::AllReduce);
  return report;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(StallError, NamesEachWaitEarliestFirst) {
  const Error error = stallError(
      threeRanks(), {stall(1, 2, kernels::kStepPlanBarrier, 200), stall(0, 2, kernels::kStepPlanBarrier, 100)});
  EXPECT_EQ(error.code(), ErrorCode::Timeout);
  const std::string text = error.what();
  EXPECT_TRUE(contains(text, "PEERLINK_TIMEOUT_MS=10000")) << text;
  const auto first = text.find("all_reduce #7 on rank 0 (GPU 0) waited for rank 2 (GPU 2) at the plan step barrier");
  const auto second = text.find("; then all_reduce #7 on rank 1 (GPU 1) waited for rank 2 (GPU 2)");
  ASSERT_NE(first, std::string::npos) << text;
  ASSERT_NE(second, std::string::npos) << text;
  EXPECT_LT(first, second);
  EXPECT_TRUE(contains(text, "earliest first")) << text;
  EXPECT_FALSE(contains(text, "in a ring")) << text;  // every rank waits for every rank at a step barrier
}

TEST(StallError, ARingsWaitMayBeAnotherRanksEcho) {
  for (const int step : {kernels::kStepHostRing, kernels::kStepRingData, kernels::kStepRingFree}) {
    const Error error = stallError(threeRanks(), {stall(1, 0, step, 100)});
    const std::string text = error.what();
    EXPECT_TRUE(contains(text, "waited for rank 0 (GPU 0) at the " + std::string(kernels::collStepName(step)))) << text;
    EXPECT_TRUE(contains(text, "the rank named may itself be waiting for another")) << text;
  }
}

TEST(StallError, AnAbortedCommunicatorIsNoDeadline) {
  const Error error =
      stallError(threeRanks(), {stall(1, 0, kernels::kStepHostRing, 100, PEERLINK_STATUS_REMOTE_ERROR)});
  EXPECT_EQ(error.code(), ErrorCode::RemoteError);
  const std::string text = error.what();
  EXPECT_TRUE(contains(text, "the communicator was aborted")) << text;
  EXPECT_FALSE(contains(text, "in a ring")) << text;  // the watchdog names the lost rank
}

TEST(StallError, RanksThatCalledDifferentlyAreTheCallersError) {
  const Error error = stallError(
      threeRanks(), {stall(0, 2, kernels::kStepPlanBarrier, 100), stall(2, 1, kernels::kStepPlanCallMismatch, 200)});
  EXPECT_EQ(error.code(), ErrorCode::InvalidUsage);
  EXPECT_TRUE(contains(error.what(), "rank 2 (GPU 2) and rank 1 (GPU 1) made different calls")) << error.what();
}

}  // namespace
}  // namespace peerlink::coll
