// Which calls on unregistered buffers across processes run as the arena ring, in what shape, and each rank's
// arguments (src/coll/arena_ring.hpp); the arena's ring area (symmetric_layout.hpp). The ring's protocol is the
// host ring's, checked in test_coll_host_ring.cc: only where its areas lie differs.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "coll/arena_ring.hpp"
#include "coll/symmetric_layout.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(ArenaRing, ModesAreNamed) {
  EXPECT_EQ(arenaRingModeNamed("AUTO"), ArenaRingMode::Auto);
  EXPECT_EQ(arenaRingModeNamed("OFF"), ArenaRingMode::Off);
  EXPECT_EQ(arenaRingModeNamed("ON"), ArenaRingMode::On);
  for (const ArenaRingMode mode : {ArenaRingMode::Auto, ArenaRingMode::Off, ArenaRingMode::On}) {
    EXPECT_EQ(arenaRingModeNamed(arenaRingModeName(mode)), mode);
  }
  EXPECT_THROW(arenaRingModeNamed("on"), Error);
  EXPECT_THROW(arenaRingModeNamed(""), Error);
}

TEST(ArenaRing, RunsTheRingsCollectivesAndTheExchangeOfTwoRanks) {
  for (const Collective collective : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather,
                                      Collective::Broadcast, Collective::Reduce}) {
    EXPECT_FALSE(arenaRingRuns(collective, 1)) << collectiveName(collective);
    for (int n = 2; n <= 8; ++n) EXPECT_TRUE(arenaRingRuns(collective, n)) << collectiveName(collective) << " " << n;
  }
  EXPECT_TRUE(arenaRingRuns(Collective::AllToAll, 2));
  EXPECT_FALSE(arenaRingRuns(Collective::AllToAll, 3));
  EXPECT_FALSE(arenaRingRuns(Collective::SendRecv, 2));  // send/recv groups take their own path
}

TEST(ArenaRing, AutoTakesEachCollectiveFromItsOwnSmallestWholeBuffer) {
  // Measured faster than the staging windows: the all-reduce and reduce from 8 MiB, the broadcast from 128 MiB, the
  // reduce-scatter from 512 MiB; never the all-gather nor the all-to-all.
  EXPECT_EQ(arenaRingAutoMinBytes(Collective::AllReduce), 8 * kMiB);
  EXPECT_EQ(arenaRingAutoMinBytes(Collective::Reduce), 8 * kMiB);
  EXPECT_EQ(arenaRingAutoMinBytes(Collective::Broadcast), 128 * kMiB);
  EXPECT_EQ(arenaRingAutoMinBytes(Collective::ReduceScatter), 512 * kMiB);
  EXPECT_EQ(arenaRingAutoMinBytes(Collective::AllGather), 0u);
  EXPECT_EQ(arenaRingAutoMinBytes(Collective::AllToAll), 0u);
  const std::size_t floats = 8 * kMiB / 4;
  EXPECT_TRUE(runsAsArenaRing(Collective::AllReduce, floats, DataType::F32, 2, ArenaRingMode::Auto));
  EXPECT_FALSE(runsAsArenaRing(Collective::AllReduce, floats - 1, DataType::F32, 2, ArenaRingMode::Auto));
  EXPECT_TRUE(runsAsArenaRing(Collective::Reduce, 8 * kMiB, DataType::U8, 3, ArenaRingMode::Auto));
  EXPECT_FALSE(runsAsArenaRing(Collective::Broadcast, 64 * kMiB, DataType::U8, 2, ArenaRingMode::Auto));
  EXPECT_TRUE(runsAsArenaRing(Collective::Broadcast, 128 * kMiB, DataType::U8, 2, ArenaRingMode::Auto));
  // The reduce-scatter counts its whole input, a rank's part times the ranks.
  EXPECT_TRUE(runsAsArenaRing(Collective::ReduceScatter, 128 * kMiB, DataType::U8, 4, ArenaRingMode::Auto));
  EXPECT_FALSE(runsAsArenaRing(Collective::ReduceScatter, 128 * kMiB - 1, DataType::U8, 4, ArenaRingMode::Auto));
  EXPECT_FALSE(runsAsArenaRing(Collective::AllGather, 1024 * kMiB, DataType::U8, 2, ArenaRingMode::Auto));
  EXPECT_FALSE(runsAsArenaRing(Collective::AllToAll, 1024 * kMiB, DataType::U8, 2, ArenaRingMode::Auto));
  EXPECT_TRUE(runsAsArenaRing(Collective::AllToAll, 1024 * kMiB, DataType::U8, 2, ArenaRingMode::On));
  // ON takes every call it runs, OFF none; nothing runs a call of nothing or a collective it does not run.
  EXPECT_TRUE(runsAsArenaRing(Collective::Broadcast, 1, DataType::U8, 2, ArenaRingMode::On));
  EXPECT_FALSE(runsAsArenaRing(Collective::Broadcast, 64 * kMiB, DataType::U8, 2, ArenaRingMode::Off));
  EXPECT_FALSE(runsAsArenaRing(Collective::AllReduce, 0, DataType::F32, 2, ArenaRingMode::On));
  EXPECT_FALSE(runsAsArenaRing(Collective::AllToAll, 64 * kMiB, DataType::U8, 4, ArenaRingMode::On));
}

TEST(ArenaRing, ShapesAreLeanUpToABucketAndWideAbove) {
  EXPECT_EQ(arenaRingShape(kArenaRingLeanMaxBytes, std::nullopt, 132).blocks, kArenaRingLeanBlocks);
  EXPECT_EQ(arenaRingShape(kArenaRingLeanMaxBytes + 1, std::nullopt, 132).blocks, kArenaRingWideBlocks);
  EXPECT_EQ(arenaRingShape(kMiB, std::nullopt, 132).slotBytes, kernels::kArenaRingSlotBytes);
  EXPECT_EQ(arenaRingShape(kMiB, HostRingShape{16, 128 << 10}, 132).blocks, 16);
  // Never past the communicator's grid cap (PEERLINK_COLL_MAX_BLOCKS; a GPU shared by three ranks: 44 of 132 SMs).
  EXPECT_EQ(arenaRingShape(kArenaRingLeanMaxBytes + 1, std::nullopt, 44).blocks, 44);
  EXPECT_EQ(arenaRingShape(kMiB, HostRingShape{48, 256 << 10}, 16).blocks, 16);
  EXPECT_EQ(arenaRingShape(kMiB, std::nullopt, 16).slotBytes, kernels::kArenaRingSlotBytes);
  const std::optional<HostRingShape> named = arenaRingShapeNamed("48x256K");
  ASSERT_TRUE(named.has_value());
  EXPECT_EQ(named->blocks, 48);
  EXPECT_EQ(named->slotBytes, std::size_t{256} << 10);
  EXPECT_FALSE(arenaRingShapeNamed("AUTO").has_value());
  EXPECT_THROW(arenaRingShapeNamed("32x512K"), Error);  // beyond the area's slots
  EXPECT_THROW(arenaRingShapeNamed("65x256K"), Error);
  EXPECT_THROW(arenaRingShapeNamed("32x256"), Error);
  // Every shape the parameter offers fits the area; the host ring's stay within its own.
  for (const char* name : {"16x256K", "32x128K", "32x256K", "48x256K", "64x128K", "64x256K"}) {
    const std::optional<HostRingShape> shape = arenaRingShapeNamed(name);
    ASSERT_TRUE(shape.has_value()) << name;
    EXPECT_LE(shape->slotBytes * kernels::kHostRingSlots, kernels::ringRegionBytes(kernels::kArenaRingSlotBytes));
  }
  EXPECT_THROW(hostRingShapeNamed("32x128K"), Error);
}

// Every rank fills the area in the next rank's arena and empties the one in its own: what rank r fills is what
// rank r + 1 empties, so the ring's protocol pairs as through host memory.
TEST(ArenaRing, EachRankFillsTheNextRanksAreaAndEmptiesItsOwn) {
  for (int n = 2; n <= kernels::kCollMaxRanks; ++n) {
    std::vector<int> arenas(static_cast<std::size_t>(n));
    std::vector<void*> areas;
    for (int& arena : arenas) areas.push_back(&arena);
    for (int r = 0; r < n; ++r) {
      const int next = (r + 1) % n;
      const kernels::HostRingArgs mine = arenaRingCallArgs(Collective::AllReduce, 12345, DataType::F32, n, r, 0,
                                                           arenaRingShape(kMiB, std::nullopt, 132), areas.data());
      const kernels::HostRingArgs theirs = arenaRingCallArgs(Collective::AllReduce, 12345, DataType::F32, n, next, 0,
                                                             arenaRingShape(kMiB, std::nullopt, 132), areas.data());
      EXPECT_EQ(mine.ownArea, areas[static_cast<std::size_t>(next)]);
      EXPECT_EQ(mine.prevArea, areas[static_cast<std::size_t>(r)]);
      EXPECT_EQ(mine.ownArea, theirs.prevArea);
      EXPECT_EQ(mine.position, r);
      EXPECT_EQ(mine.next, next);
      EXPECT_EQ(mine.prev, (r + n - 1) % n);
      EXPECT_EQ(mine.threads, kernels::kArenaRingThreads);
      EXPECT_EQ(mine.regionBytes, kernels::ringRegionBytes(kernels::kArenaRingSlotBytes));
      EXPECT_EQ(mine.stallStep, kernels::kStepArenaRing);
      EXPECT_EQ(mine.blocks, kArenaRingLeanBlocks);
    }
  }
  // The host ring's arguments keep their own block, region and stall step.
  const kernels::HostRingArgs host =
      hostRingCallArgs(Collective::AllReduce, 12345, DataType::F32, {0, 1}, 0, 0, HostRingShape{32, 64 << 10});
  EXPECT_EQ(host.threads, kernels::kHostRingThreads);
  EXPECT_EQ(host.regionBytes, kernels::kHostRingRegionBytes);
  EXPECT_EQ(host.stallStep, kernels::kStepHostRing);
}

TEST(ArenaRing, TheAreaComesWithTheWindowItsWordsZeroedItsSlotsAfter) {
  for (int n = 1; n <= kernels::kCollMaxRanks; ++n) {
    const SymmetricLayout without = symmetricLayout(n, false, 64 * kMiB);
    EXPECT_FALSE(without.hasRingArea);
    EXPECT_FALSE(symmetricLayout(n, false, 0, true).hasRingArea);  // no window: calls never stage
    const SymmetricLayout layout = symmetricLayout(n, n > 2, 64 * kMiB, true);
    ASSERT_TRUE(layout.hasRingArea);
    EXPECT_EQ(layout.ringArea % kSymmetricAlignment, 0u);
    EXPECT_EQ(layout.zeroedBytes, layout.ringArea + kernels::kHostRingWordsBytes);
    EXPECT_GE(layout.ringArea, layout.p2pScratch + 2 * static_cast<std::size_t>(n) * kernels::kCollP2pLlSlotBytes);
    const std::size_t end = layout.ringArea + kernels::kArenaRingAreaBytes;
    if (layout.hasRingStage) {
      EXPECT_GE(layout.ringStage, end);
    }
    if (layout.hasStage) {
      EXPECT_GE(layout.stage, end);
    }
    EXPECT_GE(layout.window, end);
    EXPECT_LE(layout.window + layout.windowBytes, layout.bytes);
  }
}

}  // namespace
}  // namespace peerlink::coll
