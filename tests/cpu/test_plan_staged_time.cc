// A staged call's time from the communicator's schedule (src/plan/staged_time.hpp): serially the sum of every
// operation; pipelined, each operation starts when its lane and the event it waits for allow, worked out by hand
// here, and the operations on the critical path add up to the time.
#include <gtest/gtest.h>

#include <algorithm>

#include "plan/staged_time.hpp"

namespace peerlink::plan {
namespace {

// Three chunks of unequal copies and kernels.
StagedDurations threeChunks() {
  return {{2.0, 1.0, 4.0}, {5.0, 3.0, 6.0}, {1.0, 2.0, 3.0}};
}

TEST(PlanStagedTime, SerialIsTheSumOfEveryOperation) {
  const StagedTime time = stagedTime(threeChunks(), false);
  EXPECT_DOUBLE_EQ(time.timeUs, 2 + 5 + 1 + 1 + 3 + 2 + 4 + 6 + 3);
  const std::vector<bool> every(3, true);
  EXPECT_EQ(time.copyInOnPath, every);
  EXPECT_EQ(time.kernelOnPath, every);
  EXPECT_EQ(time.copyOutOnPath, every);
}

// Copy stream: in0 [0,2], in1 [2,3], (waits K0) out0 [7,8], in2 [8,12], out1 [12,14], (waits K2) out2 [18,21].
// Caller's stream: K0 [2,7] after in0, K1 [7,10] after K0, K2 [12,18] after in2, then the join at 21.
TEST(PlanStagedTime, PipelinedFollowsTheSchedulesWaits) {
  const StagedTime time = stagedTime(threeChunks(), true);
  EXPECT_DOUBLE_EQ(time.timeUs, 21);
  // in0 -> K0 -> out0 -> in2 -> K2 -> out2: 2 + 5 + 1 + 4 + 6 + 3.
  EXPECT_EQ(time.copyInOnPath, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(time.kernelOnPath, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(time.copyOutOnPath, (std::vector<bool>{true, false, true}));
}

// A side with no copy takes no time and is never on the path; one chunk runs serially whatever the setting.
TEST(PlanStagedTime, NoCopyAndOneChunk) {
  StagedDurations durations = threeChunks();
  durations.copyOut[0] = std::nullopt;
  const StagedTime time = stagedTime(durations, true);
  // in2 now follows in1 on the copy stream once K0 has ended: [7,11]; K2 [11,17]; out2 [17,20].
  EXPECT_DOUBLE_EQ(time.timeUs, 20);
  EXPECT_FALSE(time.copyOutOnPath[0]);
  EXPECT_EQ(time.kernelOnPath, (std::vector<bool>{true, false, true}));

  const StagedDurations one{{2.0}, {5.0}, {1.0}};
  EXPECT_DOUBLE_EQ(stagedTime(one, true).timeUs, 8);
  EXPECT_DOUBLE_EQ(stagedTime(one, false).timeUs, 8);
  EXPECT_DOUBLE_EQ(stagedTime({{}, {}, {}}, true).timeUs, 0);
}

// Equal chunks, where the kernels outlast the copies beside them and where the copies outlast the kernels: the
// first copy in, then per chunk the longer of its kernel and the copies beside it (the previous chunk's out, the
// next one's in), then the last copy out. Copy-bound, the copy stream runs without a gap and no kernel shows.
TEST(PlanStagedTime, EqualChunksKernelOrCopyBound) {
  const std::size_t n = 16;
  const auto chunks = [&](double in, double kernel, double out) {
    return StagedDurations{std::vector<std::optional<double>>(n, in), std::vector<double>(n, kernel),
                           std::vector<std::optional<double>>(n, out)};
  };
  const auto overlapped = [&](double in, double kernel, double out) {
    double total = in + std::max(kernel, in) + std::max(kernel, out) + out;  // the first and last chunk
    for (std::size_t k = 1; k + 1 < n; ++k) total += std::max(kernel, out + in);
    return total;
  };
  const StagedTime kernelBound = stagedTime(chunks(1.5, 10, 2.5), true);
  EXPECT_NEAR(kernelBound.timeUs, overlapped(1.5, 10, 2.5), 1e-9);
  EXPECT_NEAR(kernelBound.timeUs, 1.5 + n * 10.0 + 2.5, 1e-9);
  EXPECT_EQ(kernelBound.kernelOnPath, std::vector<bool>(n, true));
  EXPECT_NEAR(stagedTime(chunks(1.5, 10, 2.5), false).timeUs, n * (1.5 + 10.0 + 2.5), 1e-9);

  const StagedTime copyBound = stagedTime(chunks(6, 3, 5), true);
  EXPECT_NEAR(copyBound.timeUs, overlapped(6, 3, 5), 1e-9);
  EXPECT_NEAR(copyBound.timeUs, n * (6.0 + 5.0), 1e-9);
  EXPECT_EQ(copyBound.kernelOnPath, std::vector<bool>(n, false));
  EXPECT_EQ(copyBound.copyInOnPath, std::vector<bool>(n, true));
  EXPECT_EQ(copyBound.copyOutOnPath, std::vector<bool>(n, true));
}

}  // namespace
}  // namespace peerlink::plan
