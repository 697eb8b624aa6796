#include <gtest/gtest.h>

#include "peerlink/error.hpp"
#include "transport/chunk_plan.hpp"
#include "transport/copy_validation.hpp"

namespace peerlink {
namespace {

TEST(ChunkPlan, CoversEveryByteOnceInOrderWithRoundRobinSlots) {
  const auto chunks = planChunks(10 * 1000 + 7, 1000, 4);
  ASSERT_EQ(chunks.size(), 11u);
  std::size_t next = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].offset, next);
    EXPECT_EQ(chunks[i].slot, static_cast<int>(i % 4));
    next += chunks[i].bytes;
  }
  EXPECT_EQ(next, 10u * 1000 + 7);
  EXPECT_EQ(chunks.back().bytes, 7u);
}

TEST(ChunkPlan, SmallAndEmptyTransfers) {
  EXPECT_TRUE(planChunks(0, 4096, 4).empty());
  const auto one = planChunks(5, 4096, 4);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].bytes, 5u);
  EXPECT_EQ(planChunks(8192, 4096, 1)[1].slot, 0);
}

TEST(ChunkPlan, RejectsZeroChunkOrNoSlots) {
  EXPECT_THROW(planChunks(10, 0, 4), Error);
  EXPECT_THROW(planChunks(10, 4, 0), Error);
}

// Shares cover every byte once, in 4 KiB multiples but the last, the caller's 1 MiB ahead of the others.
TEST(ChunkPlan, RelaySharesCoverTheTransferOnce) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  const auto two = planRelayShares(64 * kMiB, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].offset, 0u);
  EXPECT_EQ(two[0].bytes, 33 * kMiB);
  EXPECT_EQ(two[1].offset, 33 * kMiB);
  EXPECT_EQ(two[1].bytes, 31 * kMiB);
  const auto one = planRelayShares(12345, 1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].bytes, 12345u);
  EXPECT_EQ(planRelayShares(5, 0).size(), 1u);
  // Smaller than the lead: the caller's stripe takes it all, the others nothing.
  const auto small = planRelayShares(100000, 3);
  ASSERT_EQ(small.size(), 3u);
  EXPECT_EQ(small[0].bytes, 100000u);
  EXPECT_EQ(small[1].bytes + small[2].bytes, 0u);
  for (const std::size_t bytes :
       {std::size_t{0}, std::size_t{1}, std::size_t{4097}, 3 * kMiB + 5, 64 * kMiB + 13, 1024 * kMiB}) {
    for (std::size_t relays = 1; relays <= 7; ++relays) {
      const auto shares = planRelayShares(bytes, relays);
      ASSERT_EQ(shares.size(), relays);
      std::size_t next = 0;
      for (std::size_t i = 0; i < shares.size(); ++i) {
        if (shares[i].bytes == 0) continue;
        EXPECT_EQ(shares[i].offset, next) << bytes << " " << relays << " " << i;
        EXPECT_EQ(shares[i].offset % 4096, 0u) << bytes << " " << relays << " " << i;
        next = shares[i].offset + shares[i].bytes;
      }
      EXPECT_EQ(next, bytes) << bytes << " " << relays;
    }
  }
}

// A split relay's kernels run on an eighth of each relay GPU's SMs, one relay's on a quarter; never none.
TEST(ChunkPlan, RelayKernelsRunOnAFewSms) {
  EXPECT_EQ(relayKernelSms(132, 2), 16);
  EXPECT_EQ(relayKernelSms(132, 3), 16);
  EXPECT_EQ(relayKernelSms(132, 1), 33);
  EXPECT_EQ(relayKernelSms(4, 2), 1);
  EXPECT_EQ(relayKernelSms(1, 1), 1);
  EXPECT_EQ(relayKernelSms(0, 1), 1);
}

TEST(CopyValidation, RangesOverlap) {
  EXPECT_TRUE(rangesOverlap(100, 100, 1));
  EXPECT_TRUE(rangesOverlap(100, 115, 16));
  EXPECT_TRUE(rangesOverlap(115, 100, 16));
  EXPECT_FALSE(rangesOverlap(100, 116, 16));
  EXPECT_FALSE(rangesOverlap(116, 100, 16));
  EXPECT_FALSE(rangesOverlap(100, 100, 0));
}

}  // namespace
}  // namespace peerlink
