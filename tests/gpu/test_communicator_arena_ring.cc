// The arena ring (src/coll/arena_ring.hpp): calls on unregistered buffers across processes as the host ring's
// kernel with its slots in the ranks' arenas, forced in one process (PEERLINK_COLL_STAGE_UNREGISTERED) with 2-4 ranks
// on the machine's first one or two GPUs by turns (PEERLINK_COLL_SHARE_GPUS). Every collective it runs, counts from
// one element to several slices of every block on the lean (32-block) and the wide (64-block) grid, counts not
// divisible by the ranks, in place and out of place, buffers off 16-byte boundaries, another type and op, calls of
// both grids one after another on the same areas, eager and captured in a CUDA graph replayed with new inputs and
// eager calls between, against the host reference. Across processes the same path runs in
// test_communicator_processes.cc (AUTO takes its large calls). What these measure is not speed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "coll/arena_ring.hpp"
#include "coll_test_support.hpp"

namespace peerlink::testing {
namespace {

constexpr Collective kRingCollectives[] = {Collective::AllReduce, Collective::Broadcast,     Collective::Reduce,
                                           Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll};

// Every call that would go through the staging windows as the arena ring (ON): the small ones too.
Params arenaRingParams() {
  return paramsWith({{"PEERLINK_COLL_SHARE_GPUS", "1"},
                     {"PEERLINK_COLL_STAGE_UNREGISTERED", "ON"},
                     {"PEERLINK_COLL_ARENA_RING", "ON"}});
}

// Elements of a call (a rank's part for the all-gather, reduce-scatter and all-to-all) whose every block part spans
// `slices` slices of the grid AUTO picks for it, plus a few, one more than a multiple of the ranks.
std::size_t slicedCount(Collective collective, int n, std::size_t slices, int blocks) {
  const std::size_t slot = kernels::kArenaRingSlotBytes / sizeof(float);
  const auto ranks = static_cast<std::size_t>(n);
  // An all-reduce's chunks are its buffer's n shards, each cut among the blocks; a chain's one chunk is the buffer.
  const bool shards = collective == Collective::AllReduce;
  const std::size_t total = slices * slot * static_cast<std::size_t>(blocks) * (shards ? ranks : 1) + 3;
  return total / ranks * ranks + 1;
}

// (ranks, collective)
class ArenaRingPath : public ::testing::TestWithParam<std::tuple<int, Collective>> {};

TEST_P(ArenaRingPath, MatchesHostReference) {
  PEERLINK_REQUIRE_GPUS(1);
  const auto [ranks, collective] = GetParam();
  if (!coll::arenaRingRuns(collective, ranks)) GTEST_SKIP() << "the arena ring does not run it on these ranks";
  Communicator comm(gpusByTurns(ranks, 2), arenaRingParams());
  const std::size_t n = static_cast<std::size_t>(ranks);
  const std::size_t lean = slicedCount(collective, ranks, 3, coll::kArenaRingLeanBlocks);
  // Past kArenaRingLeanMaxBytes (the whole call): the wide grid, a slice a block and a bit, or more.
  std::size_t wide = slicedCount(collective, ranks, 1, coll::kArenaRingWideBlocks);
  const std::size_t perRank =
      collective == Collective::AllReduce || collective == Collective::Broadcast || collective == Collective::Reduce
          ? 1
          : n;
  if (wide * perRank * sizeof(float) <= coll::kArenaRingLeanMaxBytes) wide = coll::kArenaRingLeanMaxBytes / 4 + n + 1;
  int cases = 0;
  std::uint64_t seed = 37;
  for (const std::size_t count : {std::size_t{1}, 2 * n + 1, std::size_t{1001}, lean, wide}) {
    const std::string choice = comm.describeChoice(collective, count * sizeof(float));
    if (count >= lean) {  // the smaller ones stay in LL lines on the callers' own buffers
      EXPECT_NE(choice.find("arena ring"), std::string::npos) << count << " elements: " << choice;
    }
    for (const bool inPlace : {false, true}) {
      for (const std::size_t misalign : {std::size_t{0}, std::size_t{4}}) {
        if (misalign > 0 && (inPlace || count < 1001)) continue;
        CollCase c;
        c.collective = collective;
        c.count = count;
        c.root = static_cast<int>(seed % n);
        c.inPlace = inPlace;
        c.misalign = misalign;
        c.reverseOrder = seed % 2 == 0;
        c.seed = seed++;
        ASSERT_EQ(runCase(comm, c), "") << ranks << " ranks, " << c.describe() << ", misaligned by " << misalign;
        ++cases;
      }
    }
  }
  if (collective != Collective::AllGather && collective != Collective::AllToAll &&
      collective != Collective::Broadcast) {
    for (const auto& [type, op] : {std::pair{DataType::BF16, ReduceOp::Avg}, std::pair{DataType::I64, ReduceOp::Max},
                                   std::pair{DataType::F16, ReduceOp::Min}}) {
      CollCase c;
      c.collective = collective;
      c.type = type;
      c.op = op;
      c.count = lean;
      c.root = ranks - 1;
      c.seed = seed++;
      ASSERT_EQ(runCase(comm, c), "") << ranks << " ranks, " << c.describe();
      ++cases;
    }
  }
  std::printf("%d ranks, %s: %d cases passed (%s)\n", ranks, collectiveName(collective), cases,
              comm.describeChoice(collective, lean * sizeof(float)).c_str());
}

std::string caseName(const ::testing::TestParamInfo<ArenaRingPath::ParamType>& param) {
  return std::to_string(std::get<0>(param.param)) + "ranks_" + collectiveName(std::get<1>(param.param));
}

INSTANTIATE_TEST_SUITE_P(Forced, ArenaRingPath,
                         ::testing::Combine(::testing::Values(2, 3, 4), ::testing::ValuesIn(kRingCollectives)),
                         caseName);

// (ranks, collective): a call of several slices captured in one graph over the ranks, replayed with new inputs and
// eager calls of another size between (replayCase), out of place and in place.
class ArenaRingGraph : public ::testing::TestWithParam<std::tuple<int, Collective>> {};

TEST_P(ArenaRingGraph, ReplaysMatchHostReference) {
  PEERLINK_REQUIRE_GPUS(1);
  const auto [ranks, collective] = GetParam();
  if (!coll::arenaRingRuns(collective, ranks)) GTEST_SKIP() << "the arena ring does not run it on these ranks";
  for (const bool inPlace : {false, true}) {
    if (inPlace && collective == Collective::AllToAll) continue;
    CollCase c;
    c.collective = collective;
    c.count = slicedCount(collective, ranks, 2, coll::kArenaRingLeanBlocks);
    c.root = ranks - 1;
    c.inPlace = inPlace;
    c.seed = 83 + (inPlace ? 1 : 0);
    replayCase(gpusByTurns(ranks, 2), arenaRingParams(), c);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Forced, ArenaRingGraph,
                         ::testing::Combine(::testing::Values(2, 3), ::testing::ValuesIn(kRingCollectives)), caseName);

// Under AUTO: all-reduces below the ring's smallest go through the staging windows, those from it as the arena ring,
// beside all-gathers (always through the windows) and broadcasts, and they alternate on one communicator with LL
// calls between, each against the reference.
TEST(ArenaRingAuto, TakesItsCallsBesideTheStagingWindowsAndTheLines) {
  PEERLINK_REQUIRE_GPUS(1);
  Communicator comm(gpusByTurns(2, 2),
                    paramsWith({{"PEERLINK_COLL_SHARE_GPUS", "1"}, {"PEERLINK_COLL_STAGE_UNREGISTERED", "ON"}}));
  const std::size_t ringCount = coll::arenaRingAutoMinBytes(Collective::AllReduce) / sizeof(float) + 3;
  EXPECT_NE(comm.describeChoice(Collective::AllReduce, ringCount * sizeof(float)).find("arena ring"),
            std::string::npos);
  std::uint64_t seed = 211;
  for (int round = 0; round < 3; ++round) {
    for (const std::size_t count : {std::size_t{17}, ringCount, ringCount / 2, ringCount * 5}) {
      for (const Collective collective : {Collective::AllReduce, Collective::AllGather, Collective::Broadcast}) {
        CollCase c;
        c.collective = collective;
        c.count = count;
        c.root = round % 2;
        c.seed = seed++;
        ASSERT_EQ(runCase(comm, c), "") << "round " << round << ", " << c.describe();
      }
    }
  }
}

}  // namespace
}  // namespace peerlink::testing
