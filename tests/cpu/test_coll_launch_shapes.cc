// The collective kernels' launch shapes (coll_kernels.cuh): host functions, so checked without a GPU. Every
// rank of a call must compute the same grid from the same rank-independent sizes; these pin down the rules.
#include <gtest/gtest.h>

#include <cstddef>

#include "coll/comm_launch_support.hpp"
#include "kernels/coll_kernels.cuh"

namespace peerlink::kernels {
namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

TEST(CollLaunchShapes, CopyChunksShrinkSoMediumMessagesReachEverySm) {
  const int sms = 132;  // H200
  EXPECT_EQ(collCopyChunkBytes(1, sms), 8 * kKiB);
  EXPECT_EQ(collCopyBlocks(1, sms), 1);
  // 512 KiB over 132 SMs: 8 KiB chunks, 64 blocks (64 KiB chunks gave 8).
  EXPECT_EQ(collCopyChunkBytes(512 * kKiB, sms), 8 * kKiB);
  EXPECT_EQ(collCopyBlocks(512 * kKiB, sms), 64);
  // 2 MiB: 16 KiB chunks (15.5 KiB per SM, rounded up to 8 KiB steps), 128 blocks.
  EXPECT_EQ(collCopyChunkBytes(2 * kMiB, sms), 16 * kKiB);
  EXPECT_EQ(collCopyBlocks(2 * kMiB, sms), 128);
  // Large: 64 KiB chunks, every SM.
  EXPECT_EQ(collCopyChunkBytes(512 * kMiB, sms), 64 * kKiB);
  EXPECT_EQ(collCopyBlocks(512 * kMiB, sms), sms);
  for (std::size_t bytes : {std::size_t{1}, 100 * kKiB, 3 * kMiB + 5, 1024 * kMiB}) {
    EXPECT_EQ(collCopyChunkBytes(bytes, sms) % 16, 0u) << bytes;  // the copy kernel's widest unit
    EXPECT_LE(collCopyBlocks(bytes, sms), sms) << bytes;
  }
  // A cap beyond the kernels' limit is held to it.
  EXPECT_EQ(collCopyBlocks(1024 * kMiB, 100000), kCollMaxBlocks);
}

TEST(CollLaunchShapes, LlLinesPerThreadWithEveryBlockResident) {
  EXPECT_EQ(collLlBlocks(1, 132), 1);
  EXPECT_EQ(collLlBlocks(8 * 256, 132), 1);  // 256 lines: one block
  EXPECT_EQ(collLlBlocks(8 * 257, 132), 2);
  EXPECT_EQ(collLlBlocks(256 * kKiB, 132), 128);       // one line per thread
  EXPECT_EQ(collLlBlocks(kCollLlMaxBytes, 132), 132);  // at most one block per SM: threads loop over lines
  EXPECT_EQ(collLlBlocks(kCollLlMaxBytes, 100000), kCollMaxBlocks);
}

// Programmatic dependent launch: only when asked for, on compute capability 9.0+ everywhere (the kernels
// built for older GPUs do not wait for the previous kernel), and never with two ranks on one GPU.
TEST(CollLaunchShapes, LaunchesOverlapOnlyOnHopperAndWithoutSharedGpus) {
  using coll::launchesMayOverlap;
  EXPECT_TRUE(launchesMayOverlap(true, {9, 9, 9, 9}, false));
  EXPECT_TRUE(launchesMayOverlap(true, {10, 9}, false));
  EXPECT_FALSE(launchesMayOverlap(false, {9, 9, 9, 9}, false));  // PEERLINK_COLL_PDL=0
  EXPECT_FALSE(launchesMayOverlap(true, {9, 8, 9, 9}, false));   // one Ampere GPU
  EXPECT_FALSE(launchesMayOverlap(true, {9, 9}, true));          // PEERLINK_COLL_SHARE_GPUS
  EXPECT_FALSE(launchesMayOverlap(true, {}, false));
}

// Push reduction: one launch while every shard fits a sender's 16 MiB stage slot, else one per slot's worth of
// the longest shard.
TEST(CollLaunchShapes, PushRunsOneLaunchPerStageSlotOfTheLongestShard) {
  EXPECT_EQ(collPushParts(0), 1u);
  EXPECT_EQ(collPushParts(1), 1u);
  EXPECT_EQ(collPushParts(kCollPushSlotBytes), 1u);
  EXPECT_EQ(collPushParts(kCollPushSlotBytes + 16), 2u);
  EXPECT_EQ(collPushParts(6 * kCollPushSlotBytes), 6u);
  EXPECT_EQ(collPushParts(6 * kCollPushSlotBytes + 1), 7u);
  for (std::size_t bytes : {std::size_t{0}, 16 * kMiB - 16, 16 * kMiB, 16 * kMiB + 16, 64 * kMiB}) {
    EXPECT_EQ(collPushPhasedFits(bytes), collPushParts(bytes) == 1) << bytes;
  }
}

// A part of every shard per launch, from the shard's start: a slot's worth, the rest, then nothing (at the
// shard's end), so that every rank's pieces of one launch lie at the same offsets in their shards.
TEST(CollLaunchShapes, PushPartsCutEveryShardFromItsStart) {
  using coll::ElementRange;
  using coll::slotPartOf;
  const ElementRange shard{1000, 25};
  const std::size_t slot = 10;
  const std::size_t begins[] = {1000, 1010, 1020, 1025};
  const std::size_t counts[] = {10, 10, 5, 0};  // the last past the shard: empty, at its end
  std::size_t covered = 0;
  for (std::size_t part = 0; part < 4; ++part) {
    const ElementRange piece = slotPartOf(shard, slot, part);
    EXPECT_EQ(piece.begin, begins[part]) << part;
    EXPECT_EQ(piece.count, counts[part]) << part;
    covered += piece.count;
  }
  EXPECT_EQ(covered, shard.count);
  EXPECT_EQ(slotPartOf(shard, 25, 0).count, 25u);  // one slot holds it: one part
  EXPECT_EQ(slotPartOf(ElementRange{7, 0}, slot, 0).begin, 7u);
  EXPECT_EQ(slotPartOf(ElementRange{7, 0}, slot, 0).count, 0u);
}

// Over sizes from 1 byte to 1 GiB: chunks of whole 128-byte lines from 8 KiB to `largest`, grids within the cap.
void expectRingShapes(std::size_t (*chunkBytes)(std::size_t, int, std::size_t),
                      int (*blocks)(std::size_t, int, std::size_t), std::size_t largest) {
  for (std::size_t bytes : {std::size_t{1}, 100 * kKiB, 32 * kMiB + 3, 1024 * kMiB}) {
    const std::size_t chunk = chunkBytes(bytes, 132, 0);
    EXPECT_EQ(chunk % 128, 0u) << bytes;
    EXPECT_GE(chunk, 8 * kKiB) << bytes;
    EXPECT_LE(chunk, largest) << bytes;
    EXPECT_LE(blocks(bytes, 132, 0), 132) << bytes;
    EXPECT_LE(blocks(bytes, 7, 0), 7) << bytes;
  }
}

// The ring broadcast aims at 64 rounds per block in chunks of 8-32 KiB (a grid's round is the chain's fill per
// hop); the chains of the SM gather at 16 rounds of 8-64 KiB.
TEST(CollLaunchShapes, RingChunksLeaveSeveralRoundsPerBlock) {
  EXPECT_EQ(collRingBroadcastChunkBytes(512 * kMiB, 132), 32 * kKiB);
  EXPECT_EQ(collRingBroadcastBlocks(512 * kMiB, 132), 132);
  EXPECT_EQ(collRingBroadcastChunkBytes(128 * kMiB, 132), 15872u);  // 128 MiB / (132 x 64), down to 128 bytes
  EXPECT_EQ(collRingBroadcastChunkBytes(256 * kMiB, 132), 31744u);  // not 31776: whole 128-byte lines
  EXPECT_EQ(collRingBroadcastChunkBytes(32 * kMiB, 132), 8 * kKiB);
  EXPECT_EQ(collRingBroadcastBlocks(1, 132), 1);
  expectRingShapes(collRingBroadcastChunkBytes, collRingBroadcastBlocks, 32 * kKiB);
  EXPECT_EQ(collRingChunkBytes(512 * kMiB, 132), 64 * kKiB);
  EXPECT_EQ(collRingBlocks(512 * kMiB, 132), 132);
  EXPECT_EQ(collRingChunkBytes(32 * kMiB, 132), 15872u);  // 32 MiB / (132 x 16), down to 128 bytes
  EXPECT_EQ(collRingChunkBytes(1 * kMiB, 132), 8 * kKiB);
  EXPECT_EQ(collRingBlocks(1 * kMiB, 132), 128);
  EXPECT_EQ(collRingBlocks(1, 132), 1);
  expectRingShapes(collRingChunkBytes, collRingBlocks, 64 * kKiB);
}

// The ring reduce's four stage slots per block fit its stage. The reduce's single chain runs on at most 32
// blocks (they claim chunks as they go), the reduce-scatter's and all-reduce's chains side by side on at most
// 128 in all; large messages move 64 KiB per round on the reduce's 32 blocks (128 KiB from 256 MiB), 32 KiB on
// the chains' 128.
TEST(CollLaunchShapes, RingReduceSlotsFitTheStage) {
  EXPECT_EQ(collRingReduceBlocks(512 * kMiB, 132), 32);
  EXPECT_EQ(collRingReduceChunkBytes(512 * kMiB, 132), 128 * kKiB);
  EXPECT_EQ(collRingReduceChunkBytes(256 * kMiB, 132), 128 * kKiB);
  EXPECT_EQ(collRingReduceChunkBytes(256 * kMiB - 16, 132), 64 * kKiB);
  EXPECT_EQ(collRingReduceChunkBytes(128 * kMiB, 132), 64 * kKiB);
  EXPECT_EQ(collRingReduceChunkBytes(512 * kMiB, 16), 128 * kKiB);  // a narrower grid too
  EXPECT_EQ(collRingReduceBlocks(512 * kMiB, 16), 16);
  EXPECT_EQ(collRingReduceChainBlocks(512 * kMiB, 4, 132), 32);  // per chain: 128 / 4
  EXPECT_EQ(collRingReduceChainChunkBytes(512 * kMiB, 4, 132), 32 * kKiB);
  EXPECT_EQ(collRingReduceChainChunkBytes(512 * kMiB, 4, 48), 64 * kKiB);  // 48 blocks: 64 KiB again
  EXPECT_EQ(collRingReduceBlocks(1, 132), 1);
  for (std::size_t bytes : {std::size_t{1}, 100 * kKiB, 32 * kMiB + 3, 1024 * kMiB}) {
    for (int maxBlocks : {1, 7, 66, 132, 256}) {
      const std::size_t chunk = collRingReduceChunkBytes(bytes, maxBlocks);
      const auto blocks = static_cast<std::size_t>(collRingReduceBlocks(bytes, maxBlocks));
      EXPECT_EQ(chunk % 16, 0u) << bytes;
      EXPECT_GE(chunk, 8 * kKiB) << bytes;
      EXPECT_LE(blocks, 32u) << bytes;
      EXPECT_LE(blocks, static_cast<std::size_t>(maxBlocks)) << bytes;
      EXPECT_LE(4 * blocks * chunk, kCollRingStageBytes) << bytes << " " << maxBlocks;
      // The all-reduce's chains side by side share the stage too.
      for (int chains : {2, 4, 8}) {
        const auto perChain = static_cast<std::size_t>(collRingReduceChainBlocks(bytes, chains, maxBlocks));
        const std::size_t chainChunk = collRingReduceChainChunkBytes(bytes, chains, maxBlocks);
        EXPECT_EQ(chainChunk % 16, 0u) << bytes;
        EXPECT_GE(perChain, 1u);
        EXPECT_LE(4 * static_cast<std::size_t>(chains) * perChain * chainChunk, kCollRingStageBytes)
            << bytes << " " << maxBlocks << " " << chains;
        EXPECT_LE(static_cast<std::size_t>(chains) * perChain, std::max<std::size_t>(128, chains)) << bytes;
      }
    }
  }
}

// PEERLINK_COLL_RING_CHUNK lowers (or raises) the rings' largest chunk; the reduce's stage slots still cap it,
// and a limit under the 8 KiB floor is the chunk itself.
TEST(CollLaunchShapes, RingChunkLimitFromTheSetting) {
  EXPECT_EQ(collRingChunkBytes(512 * kMiB, 132, 16 * kKiB), 16 * kKiB);
  EXPECT_EQ(collRingBlocks(512 * kMiB, 132, 16 * kKiB), 132);
  EXPECT_EQ(collRingChunkBytes(1024 * kMiB, 132, 256 * kKiB), 256 * kKiB);
  EXPECT_EQ(collRingChunkBytes(512 * kMiB, 132, 256 * kKiB), 254080u);  // 16 rounds per block still
  EXPECT_EQ(collRingChunkBytes(32 * kMiB, 132, 4 * kKiB), 4 * kKiB);
  EXPECT_EQ(collRingChunkBytes(1 * kMiB, 132, 4 * kKiB), 4 * kKiB);
  EXPECT_EQ(collRingChunkBytes(32 * kMiB, 132, 1000), 992u);  // rounded down to 16 bytes
  EXPECT_EQ(collRingBroadcastChunkBytes(1024 * kMiB, 132, 64 * kKiB), 64 * kKiB);
  EXPECT_EQ(collRingBroadcastChunkBytes(512 * kMiB, 132, 64 * kKiB), 63488u);  // 64 rounds per block still
  EXPECT_EQ(collRingReduceChunkBytes(512 * kMiB, 132, 16 * kKiB), 16 * kKiB);
  EXPECT_EQ(collRingReduceChunkBytes(512 * kMiB, 132, 64 * kKiB), 64 * kKiB);  // the large chain's 128 KiB too
  EXPECT_EQ(collRingReduceBlocks(512 * kMiB, 132, 16 * kKiB), 32);
  // PEERLINK_COLL_RING_REDUCE_BLOCKS widens the reduce's chain (a grid of 64+ takes 32 KiB chunks at every
  // size), at most 128 blocks and within the grid cap; four slots per block still fit the stage.
  EXPECT_EQ(collRingReduceBlocks(512 * kMiB, 132, 0, 64), 64);
  EXPECT_EQ(collRingReduceChunkBytes(512 * kMiB, 132, 0, 64), 32 * kKiB);
  EXPECT_EQ(collRingReduceBlocks(512 * kMiB, 132, 16 * kKiB, 128), 128);
  EXPECT_EQ(collRingReduceChunkBytes(512 * kMiB, 132, 16 * kKiB, 128), 16 * kKiB);
  EXPECT_EQ(collRingReduceBlocks(512 * kMiB, 132, 0, 256), 128);
  EXPECT_EQ(collRingReduceBlocks(512 * kMiB, 48, 0, 64), 48);
  EXPECT_LE(4 * 128 * collRingReduceChunkBytes(512 * kMiB, 132, 1024 * kKiB, 128), kCollRingStageBytes);
  // Four chains of 32 blocks, four slots each: 64 KiB slots fill the 32 MiB stage, whatever the setting.
  EXPECT_EQ(collRingReduceChainChunkBytes(512 * kMiB, 4, 132, 1024 * kKiB), 64 * kKiB);
  EXPECT_EQ(collRingReduceChainChunkBytes(512 * kMiB, 4, 132, 32 * kKiB), 32 * kKiB);
}

// The pipelined kernels' flags number 2^20 rounds per block and call: past that a launch must not happen.
TEST(CollLaunchShapes, RoundsFitTheFlags) {
  const std::size_t rounds = std::size_t{1} << kCollRoundBits;
  EXPECT_TRUE(collRoundsFit(0, 1, 64 * kKiB));
  EXPECT_TRUE(collRoundsFit((rounds - 1) * 64 * kKiB, 1, 64 * kKiB));
  EXPECT_FALSE(collRoundsFit(rounds * 64 * kKiB, 1, 64 * kKiB));
  EXPECT_TRUE(collRoundsFit(rounds * 64 * kKiB, 2, 64 * kKiB));
  EXPECT_FALSE(collRoundsFit((rounds - 1) * 64 * kKiB + 1, 1, 64 * kKiB));  // the partial round counts
  // On every grid the rings choose, 1 GiB fits; on one block of 64 KiB chunks 64 GiB does not.
  EXPECT_TRUE(collRoundsFit(1024 * kMiB, collRingBlocks(1024 * kMiB, 1), collRingChunkBytes(1024 * kMiB, 1)));
  EXPECT_FALSE(
      collRoundsFit(64 * 1024 * kMiB, collRingBlocks(64 * 1024 * kMiB, 1), collRingChunkBytes(64 * 1024 * kMiB, 1)));
}

TEST(CollLaunchShapes, ReductionBlocksPer16KiB) {
  EXPECT_EQ(collReduceBlocks(1, 132), 1);
  EXPECT_EQ(collReduceBlocks(16 * kKiB + 1, 132), 2);
  EXPECT_EQ(collReduceBlocks(512 * kMiB, 132), 132);
  // The kernel built for the fewest ranks that hold the call's ranks and destinations.
  EXPECT_EQ(collReduceRankBound(1, 1), 2);
  EXPECT_EQ(collReduceRankBound(2, 2), 2);
  EXPECT_EQ(collReduceRankBound(2, 3), 4);
  EXPECT_EQ(collReduceRankBound(3, 1), 4);
  EXPECT_EQ(collReduceRankBound(4, 4), 4);
  EXPECT_EQ(collReduceRankBound(5, 1), kCollMaxRanks);
  EXPECT_EQ(collReduceRankBound(kCollMaxRanks, kCollMaxRanks), kCollMaxRanks);
}

}  // namespace
}  // namespace peerlink::kernels
