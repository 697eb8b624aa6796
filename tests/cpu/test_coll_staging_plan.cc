// A staged call's chunks (src/coll/staging_plan.hpp), run on the host: each rank's copies into its window,
// the collective between the windows (the closed form), the copies out -- and the callers' buffers must hold
// what the collective on the whole buffers gives.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "coll/host_reduce.hpp"
#include "coll/staging_plan.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

void applyCopy(const StridedCopy& copy, const std::byte* src, std::size_t srcSize, std::byte* dst,
               std::size_t dstSize) {
  for (std::size_t row = 0; row < copy.rows; ++row) {
    const std::size_t from = copy.srcOffset + row * copy.srcPitch;
    const std::size_t to = copy.dstOffset + row * copy.dstPitch;
    ASSERT_LE(from + copy.rowBytes, srcSize) << "a copy reads past its source";
    ASSERT_LE(to + copy.rowBytes, dstSize) << "a copy writes past its destination";
    std::memcpy(dst + to, src + from, copy.rowBytes);
  }
}

Bytes randomBytes(std::size_t bytes, std::uint64_t seed) {
  Bytes data(bytes);
  std::mt19937_64 rng(seed);
  for (std::byte& b : data) b = static_cast<std::byte>(rng());
  return data;
}

// Runs the staged call on the host; returns each rank's recv buffer.
std::vector<Bytes> runStaged(Collective collective, int n, int root, std::size_t count, std::size_t windowBytes,
                             const std::vector<Bytes>& sends) {
  const DataType type = DataType::I32;
  const std::size_t s = dataTypeSize(type);
  std::vector<Bytes> recvs(static_cast<std::size_t>(n));
  std::vector<Bytes> windows(static_cast<std::size_t>(n), Bytes(windowBytes));
  std::vector<std::vector<StagedChunk>> plans;
  for (int r = 0; r < n; ++r) {
    recvs[static_cast<std::size_t>(r)].resize(recvElementsOf(collective, n, count, r, root) * s);
    plans.push_back(stagedChunks(collective, n, r, root, count, s, windowBytes));
    EXPECT_EQ(plans.back().size(), plans.front().size()) << "every rank cuts the call alike";
  }
  for (std::size_t k = 0; k < plans.front().size(); ++k) {
    const std::size_t chunkCount = plans[0][k].count;
    std::vector<Bytes> windowSends;
    for (int r = 0; r < n; ++r) {
      const StagedChunk& chunk = plans[static_cast<std::size_t>(r)][k];
      EXPECT_EQ(chunk.count, chunkCount);
      EXPECT_EQ(chunk.recvOffset % 256, 0u);
      Bytes& window = windows[static_cast<std::size_t>(r)];
      if (chunk.in) {
        const Bytes& send = sends[static_cast<std::size_t>(r)];
        applyCopy(*chunk.in, send.data(), send.size(), window.data(), window.size());
      }
      const std::size_t sendBytes = sendElementsOf(collective, n, chunkCount, r, root) * s;
      EXPECT_LE(sendBytes, chunk.recvOffset) << "the send region runs into the recv region";
      windowSends.emplace_back(window.begin(), window.begin() + static_cast<std::ptrdiff_t>(sendBytes));
    }
    const std::vector<Bytes> windowRecvs =
        hostReduceReference(collective, type, ReduceOp::Sum, n, chunkCount, root, windowSends);
    for (int r = 0; r < n; ++r) {
      const StagedChunk& chunk = plans[static_cast<std::size_t>(r)][k];
      Bytes& window = windows[static_cast<std::size_t>(r)];
      const Bytes& result = windowRecvs[static_cast<std::size_t>(r)];
      EXPECT_LE(chunk.recvOffset + result.size(), windowBytes) << "the recv region leaves the window";
      if (chunk.recvOffset + result.size() > windowBytes) continue;
      if (!result.empty()) std::memcpy(window.data() + chunk.recvOffset, result.data(), result.size());
      if (chunk.out) {
        Bytes& recv = recvs[static_cast<std::size_t>(r)];
        applyCopy(*chunk.out, window.data(), window.size(), recv.data(), recv.size());
      }
    }
  }
  return recvs;
}

TEST(StagingPlan, EveryCollectiveThroughSmallWindowsGivesTheWholeResult) {
  const std::size_t s = dataTypeSize(DataType::I32);
  for (const Collective collective : {Collective::AllReduce, Collective::Broadcast, Collective::Reduce,
                                      Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll}) {
    for (int n = 1; n <= 5; ++n) {
      for (const std::size_t window : {std::size_t{1024}, std::size_t{4096} + 100}) {
        const std::size_t most = stagedChunkCount(collective, n, s, window);
        ASSERT_GT(most, 0u);
        for (const std::size_t count : {std::size_t{0}, std::size_t{1}, most - 1, most, most + 1, 3 * most + 5}) {
          for (const int root : {0, n - 1}) {
            const std::string what = std::string(collectiveName(collective)) + " n=" + std::to_string(n) +
                                     " window=" + std::to_string(window) + " count=" + std::to_string(count) +
                                     " root=" + std::to_string(root);
            std::vector<Bytes> sends;
            for (int r = 0; r < n; ++r) {
              sends.push_back(randomBytes(sendElementsOf(collective, n, count, r, root) * s, 7 * count + r));
            }
            const std::vector<Bytes> expected =
                hostReduceReference(collective, DataType::I32, ReduceOp::Sum, n, count, root, sends);
            const std::vector<Bytes> staged = runStaged(collective, n, root, count, window, sends);
            for (int r = 0; r < n; ++r) {
              EXPECT_EQ(staged[static_cast<std::size_t>(r)], expected[static_cast<std::size_t>(r)])
                  << what << " rank " << r;
            }
          }
        }
      }
    }
  }
}

TEST(StagingPlan, ChunksFillTheWindowInWholeSixteenByteUnits) {
  constexpr std::size_t kWindow = std::size_t{64} << 20;
  for (const std::size_t s : {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{8}}) {
    // All-reduce: half the window each way.
    const std::size_t most = stagedChunkCount(Collective::AllReduce, 4, s, kWindow);
    EXPECT_EQ(most * s % 16, 0u);
    EXPECT_GT(most * s, kWindow / 2 - 4096);
    EXPECT_LE(most * s, kWindow / 2);
    // All-gather on 4 ranks: one part in, four out.
    const std::size_t gather = stagedChunkCount(Collective::AllGather, 4, s, kWindow);
    EXPECT_EQ(gather * s % 16, 0u);
    EXPECT_GT(gather * s, kWindow / 5 - 4096);
  }
}

TEST(StagingPlan, SendRecvIsNotACollectiveHere) {
  EXPECT_THROW(stagedChunks(Collective::SendRecv, 2, 0, 0, 10, 4, 4096), Error);
}

}  // namespace
}  // namespace peerlink::coll
