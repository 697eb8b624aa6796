// The ring reduce's chains keeping pace (colldev::keepPace, kernels/coll_ring_reduce.cu): how a chain's claim
// counter reads from another rank (collRingClaimed) and the bound on what a chain may claim
// (collRingPaceLimit), including that the least advanced chain is never held back, so pacing cannot deadlock.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "kernels/coll_kernels.cuh"

namespace peerlink::kernels {
namespace {

unsigned long long counterWord(unsigned long long seq, unsigned long long next) {
  return (collRingClaimTag(seq) << kCollRingClaimIndexBits) | next;
}

TEST(CollRingPace, AClaimCounterReadsAsTheChunksClaimedInThisCall) {
  const unsigned long long seq = 77;
  const unsigned long long tag = collRingClaimTag(seq);
  EXPECT_EQ(collRingClaimed(counterWord(seq, 0), tag, 4096), 0u);
  EXPECT_EQ(collRingClaimed(counterWord(seq, 130), tag, 4096), 130u);
  EXPECT_EQ(collRingClaimed(counterWord(seq, 4096 + 31), tag, 4096), 4096u) << "end claims count no further";
  EXPECT_EQ(collRingClaimed(counterWord(seq - 1, 4000), tag, 4096), 0u) << "an earlier call: not started";
  EXPECT_EQ(collRingClaimed(0, tag, 4096), 0u) << "a counter never used";
  EXPECT_EQ(collRingClaimed(counterWord(seq + 1, 3), tag, 4096), 4096u) << "a later call: this one is done";
  EXPECT_EQ(collRingClaimTag(seq + (1ull << 40)), tag) << "the tag keeps the sequence number's low 40 bits";
}

TEST(CollRingPace, TheBoundIsSlackBeyondTheLeastAdvancedUnfinishedChain) {
  const unsigned long long chunks[3] = {4096, 4096, 4095};
  int laggard = -2;
  const unsigned long long claimed[3] = {900, 640, 1200};
  EXPECT_EQ(collRingPaceLimit(claimed, chunks, 3, 128, &laggard), 640u + 128u);
  EXPECT_EQ(laggard, 1);
  const unsigned long long oneDone[3] = {900, 4096, 1200};
  EXPECT_EQ(collRingPaceLimit(oneDone, chunks, 3, 128, &laggard), 900u + 128u) << "a finished chain sets no bound";
  EXPECT_EQ(laggard, 0);
  const unsigned long long allDone[3] = {4096, 4096, 4095};
  EXPECT_EQ(collRingPaceLimit(allDone, chunks, 3, 128, &laggard), ~0ull);
  EXPECT_EQ(laggard, -1);
  const unsigned long long empty[1] = {0};
  EXPECT_EQ(collRingPaceLimit(empty, empty, 1, 128, &laggard), ~0ull) << "an empty chain is done";
}

// Chains claiming in a random order, each claim allowed only under the bound its chain sees: some chain can
// always claim until all are done (no deadlock), and no chain is ever more than the slack ahead of another
// unfinished one.
TEST(CollRingPace, SomeChainCanAlwaysClaimAndNoneGetsFurtherAheadThanTheSlack) {
  std::mt19937 random(5);
  for (int n = 2; n <= 8; ++n) {
    for (const unsigned long long slack : {1ull, 4ull, 128ull}) {
      std::vector<unsigned long long> chunks(static_cast<std::size_t>(n));
      for (auto& c : chunks) c = 200 + random() % 64;
      std::vector<unsigned long long> claimed(static_cast<std::size_t>(n), 0);
      const auto mayClaim = [&](int chain) {
        std::vector<unsigned long long> otherClaimed, otherChunks;
        for (int c = 0; c < n; ++c) {
          if (c == chain) continue;
          otherClaimed.push_back(claimed[static_cast<std::size_t>(c)]);
          otherChunks.push_back(chunks[static_cast<std::size_t>(c)]);
        }
        int laggard = -1;
        const unsigned long long index = claimed[static_cast<std::size_t>(chain)];
        return index < chunks[static_cast<std::size_t>(chain)] &&
               index < collRingPaceLimit(otherClaimed.data(), otherChunks.data(), n - 1, slack, &laggard);
      };
      for (;;) {
        std::vector<int> ready;
        for (int c = 0; c < n; ++c) {
          if (mayClaim(c)) ready.push_back(c);
        }
        bool done = true;
        for (int c = 0; c < n; ++c)
          done = done && claimed[static_cast<std::size_t>(c)] == chunks[static_cast<std::size_t>(c)];
        if (done) break;
        ASSERT_FALSE(ready.empty()) << n << " chains, slack " << slack << ": no chain may claim";
        ++claimed[static_cast<std::size_t>(ready[random() % ready.size()])];
        for (int a = 0; a < n; ++a) {
          for (int b = 0; b < n; ++b) {
            const auto ca = claimed[static_cast<std::size_t>(a)];
            const auto cb = claimed[static_cast<std::size_t>(b)];
            if (cb < chunks[static_cast<std::size_t>(b)]) {
              ASSERT_LE(ca, cb + slack) << n << " chains";
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace peerlink::kernels
