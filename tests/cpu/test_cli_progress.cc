// The progress line of long commands in a log (tools/peerlink/progress_line.hpp): the first report at once, then at
// most one per ProgressThrottle::kEvery.
#include <gtest/gtest.h>

#include <chrono>

#include "progress_line.hpp"

namespace peerlink::cli {
namespace {

TEST(ProgressThrottle, TheFirstLineAtOnceThenOneAPeriodAtMost) {
  using std::chrono::milliseconds;
  const auto start = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  ProgressThrottle throttle;
  EXPECT_TRUE(throttle.due(start));
  EXPECT_FALSE(throttle.due(start + milliseconds(1)));
  EXPECT_FALSE(throttle.due(start + ProgressThrottle::kEvery - milliseconds(1)));
  EXPECT_TRUE(throttle.due(start + ProgressThrottle::kEvery));
  // The period counts from the last line shown, not from the first.
  EXPECT_FALSE(throttle.due(start + ProgressThrottle::kEvery + milliseconds(5000)));
  EXPECT_TRUE(throttle.due(start + 2 * ProgressThrottle::kEvery + milliseconds(1)));
}

}  // namespace
}  // namespace peerlink::cli
