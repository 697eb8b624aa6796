// How a ring chain's bytes are cut into chunks (kernels/ring_chunk_layout.hpp): the kernels find every chunk
// from its number, so the cut must cover the chain exactly, in order, in whole lines, never past a stage slot.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "kernels/coll_kernels.cuh"
#include "kernels/ring_chunk_layout.hpp"

namespace peerlink::kernels {
namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

// Every property a kernel relies on; returns what broke, empty when none.
std::string layoutProblem(std::size_t bytes, std::size_t chunkBytes, std::size_t blocks, int tiers) {
  const RingChunkLayout layout = RingChunkLayout::make(bytes, chunkBytes, blocks, tiers);
  const std::size_t smallest = chunkBytes >> layout.tiers;
  std::size_t next = 0;
  std::size_t previousSize = chunkBytes;
  for (std::size_t c = 0; c < layout.count(); ++c) {
    const RingChunk chunk = layout.at(c);
    const std::string where = "chunk " + std::to_string(c) + " of " + std::to_string(layout.count());
    if (chunk.offset != next) return where + ": starts at " + std::to_string(chunk.offset);
    if (chunk.bytes == 0 || chunk.bytes > chunkBytes) return where + ": " + std::to_string(chunk.bytes) + " bytes";
    if (chunk.offset % smallest != 0) return where + ": not on a tail chunk's boundary";
    const bool last = c + 1 == layout.count();
    if (c < layout.bodyChunks && layout.tiers > 0 && chunk.bytes != chunkBytes) return where + ": a short body chunk";
    if (!last && chunk.bytes > previousSize) return where + ": larger than the chunk before it";
    previousSize = chunk.bytes;
    next = chunk.offset + chunk.bytes;
  }
  if (next != bytes) return "the chunks end at " + std::to_string(next) + ", not " + std::to_string(bytes);
  const RingChunk past = layout.at(layout.count());
  if (past.offset != bytes || past.bytes != 0) return "a chunk past the end";
  return "";
}

TEST(RingChunkLayout, WithoutTailChunksAreFullButTheLast) {
  const RingChunkLayout layout = RingChunkLayout::make(10 * 64 * kKiB + 1024, 64 * kKiB, 32, 0);
  EXPECT_EQ(layout.tiers, 0);
  EXPECT_EQ(layout.count(), 11u);
  EXPECT_EQ(layout.at(3).offset, 3 * 64 * kKiB);
  EXPECT_EQ(layout.at(3).bytes, 64 * kKiB);
  EXPECT_EQ(layout.at(10).bytes, 1024u);
  EXPECT_EQ(RingChunkLayout::make(0, 64 * kKiB, 32, 0).count(), 0u);
  EXPECT_EQ(RingChunkLayout::make(0, 64 * kKiB, 32, 2).count(), 0u);
}

TEST(RingChunkLayout, TheTailHasOneChunkPerBlockAndTierAndTheLastTierTheRest) {
  // The reduce at 32 MiB: 32 blocks of 64 KiB chunks, two tiers: 32 chunks of 32 KiB, then 16 KiB ones.
  const RingChunkLayout layout = RingChunkLayout::make(32 * kMiB, 64 * kKiB, 32, 2);
  EXPECT_EQ(layout.tiers, 2);
  EXPECT_EQ(layout.bodyChunks, 488u);  // 32 MiB less the 1.5 MiB tail, in 64 KiB
  EXPECT_EQ(layout.tierChunks[0], 32u);
  EXPECT_EQ(layout.tierChunks[1], 32u);
  EXPECT_EQ(layout.count(), 552u);
  EXPECT_EQ(layout.at(487).bytes, 64 * kKiB);
  EXPECT_EQ(layout.at(488).offset, 488 * 64 * kKiB);
  EXPECT_EQ(layout.at(488).bytes, 32 * kKiB);
  EXPECT_EQ(layout.at(520).offset, 488 * 64 * kKiB + 32 * 32 * kKiB);
  EXPECT_EQ(layout.at(520).bytes, 16 * kKiB);
  EXPECT_EQ(layout.at(551).offset + layout.at(551).bytes, 32 * kMiB);
  // The body holds whole chunks only: 40 KiB more makes the tail 1.5 MiB + 40 KiB, the extra in the last tier.
  const RingChunkLayout more = RingChunkLayout::make(32 * kMiB + 40 * kKiB, 64 * kKiB, 32, 2);
  EXPECT_EQ(more.bodyChunks, 488u);
  EXPECT_EQ(more.tierChunks[0], 32u);
  EXPECT_EQ(more.tierChunks[1], 35u);  // 552 KiB in 16 KiB chunks
  EXPECT_EQ(more.at(more.count() - 1).bytes, 8 * kKiB);
}

TEST(RingChunkLayout, TiersBelowTheSmallestTailChunkAreDropped) {
  EXPECT_EQ(RingChunkLayout::make(kMiB, 8 * kKiB, 8, 3).tiers, 1);   // 4 KiB is the least
  EXPECT_EQ(RingChunkLayout::make(kMiB, 64 * kKiB, 8, 3).tiers, 3);  // 8 KiB
  EXPECT_EQ(RingChunkLayout::make(kMiB, 4 * kKiB, 8, 2).tiers, 0);
  EXPECT_EQ(RingChunkLayout::make(kMiB, 64 * kKiB, 8, 9).tiers, kRingMaxTailTiers);
  EXPECT_EQ(RingChunkLayout::make(kMiB, 64 * kKiB, 8, -1).tiers, 0);
  // 24 KiB + 16 bytes: halves that are not whole 128-byte lines are no tier.
  EXPECT_EQ(RingChunkLayout::make(kMiB, 24 * kKiB + 16, 8, 1).tiers, 0);
}

TEST(RingChunkLayout, SmallChainsStartInTheTail) {
  // 10000 bytes on 32 blocks: no body, no whole 32 KiB chunk, one 16 KiB-tier chunk of 10000 bytes.
  const RingChunkLayout layout = RingChunkLayout::make(10000, 64 * kKiB, 32, 2);
  EXPECT_EQ(layout.bodyChunks, 0u);
  EXPECT_EQ(layout.tierChunks[0], 0u);
  EXPECT_EQ(layout.count(), 1u);
  EXPECT_EQ(layout.at(0).bytes, 10000u);
}

TEST(RingChunkLayout, EveryCutCoversTheChainInOrder) {
  const std::size_t sizes[] = {0,
                               16,
                               4096,
                               10000,
                               64 * kKiB - 16,
                               64 * kKiB,
                               1 * kMiB,
                               3 * kMiB + 48,
                               32 * kMiB,
                               32 * kMiB + 40 * kKiB,
                               100 * kMiB + 128};
  const std::size_t chunks[] = {8 * kKiB, 16 * kKiB, 32 * kKiB, 64 * kKiB, 24 * kKiB + 16};
  const std::size_t grids[] = {1, 7, 32, 128};
  for (std::size_t bytes : sizes) {
    for (std::size_t chunk : chunks) {
      for (std::size_t blocks : grids) {
        for (int tiers = 0; tiers <= kRingMaxTailTiers; ++tiers) {
          EXPECT_EQ(layoutProblem(bytes, chunk, blocks, tiers), "")
              << bytes << " bytes, " << chunk << "-byte chunks, " << blocks << " blocks, " << tiers << " tiers";
        }
      }
    }
  }
}

TEST(RingChunkLayout, RoundsFitCountTheTail) {
  const std::size_t limit = std::size_t{1} << kCollRoundBits;
  // The reduce's blocks claim chunks: one block may take every chunk and the end marker.
  EXPECT_TRUE(collRingReduceRoundsFit((limit - 2) * 64 * kKiB, 1, 64 * kKiB, 0));
  EXPECT_FALSE(collRingReduceRoundsFit((limit - 1) * 64 * kKiB, 1, 64 * kKiB, 0));
  // Two tiers on one block: the last 64 KiB become a 32 KiB chunk and two of 16 KiB, two chunks more.
  EXPECT_TRUE(collRingReduceRoundsFit((limit - 4) * 64 * kKiB, 1, 64 * kKiB, 2));
  EXPECT_FALSE(collRingReduceRoundsFit((limit - 3) * 64 * kKiB, 1, 64 * kKiB, 2));
  // The broadcast's static rounds: every block-th chunk.
  EXPECT_TRUE(collRingRoundsFit((limit - 1) * 2 * 32 * kKiB, 2, 32 * kKiB, 0));
  EXPECT_FALSE(collRingRoundsFit(limit * 2 * 32 * kKiB, 2, 32 * kKiB, 0));
  EXPECT_TRUE(collRingRoundsFit(1024 * kMiB, 132, 32 * kKiB, kRingMaxTailTiers));
}

}  // namespace
}  // namespace peerlink::kernels
