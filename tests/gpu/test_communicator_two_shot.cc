// The two-shot all-reduce and reduce past their simplest form on real GPUs: the split two-shot's two kernels,
// the push kernel (AUTO's two phases from 16 MiB; under PEERLINK_COLL_PUSH=1, a launch per stage slot past one) and
// the rooted two-shot reduce on either side of its root-shard line, each on uneven shards and tails, in place
// and out, checked against the closed-form host reference (src/coll/host_reduce.hpp) with guard bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "coll_test_support.hpp"

namespace peerlink::testing {
namespace {

// From 64 MiB an all-reduce runs as two kernels (a reduce-scatter of each rank's shard, then an all-gather
// that pushes it): counts that leave uneven shards and a tail, several types and ops, in place and out.
TEST(CommunicatorSplitTwoShot, UnevenShardsAndTails) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  Communicator comm(devices, paramsWith({}));
  const std::vector<std::pair<DataType, ReduceOp>> cases = {
      {DataType::F32, ReduceOp::Sum}, {DataType::BF16, ReduceOp::Avg}, {DataType::I64, ReduceOp::Max}};
  for (const auto& [type, op] : cases) {
    for (const bool inPlace : {false, true}) {
      CollCase c;
      c.collective = Collective::AllReduce;
      c.type = type;
      c.op = op;
      c.count = (std::size_t{64} << 20) / dataTypeSize(type) + 5;
      c.inPlace = inPlace;
      c.seed = inPlace ? 91 : 92;
      ASSERT_EQ(runCase(comm, c), "") << c.describe();
    }
  }
}

// From 16 MiB an all-reduce on 3+ ranks of an NVLink mesh pushes in two phases while every shard fits a 16 MiB
// stage slot (kAutoPushFrom); under PEERLINK_COLL_PUSH=1 larger shards are pushed in parts of a slot, a launch
// each. Counts that leave uneven shards and a tail, several types and ops, in place and out, in one part and
// in several.
TEST(CommunicatorPush, TwoPhasesAndPartsWithUnevenShards) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  Communicator automatic(devices, paramsWith({}));
  Communicator pushed(devices, paramsWith({{"PEERLINK_COLL_PUSH", "1"}}));
  const std::vector<std::pair<DataType, ReduceOp>> cases = {
      {DataType::F32, ReduceOp::Sum}, {DataType::BF16, ReduceOp::Avg}, {DataType::I64, ReduceOp::Max}};
  std::uint64_t seed = 101;
  for (const auto& [type, op] : cases) {
    for (const std::size_t bytes : {std::size_t{16} << 20, std::size_t{40} << 20}) {
      for (const bool inPlace : {false, true}) {
        CollCase c;
        c.collective = Collective::AllReduce;
        c.type = type;
        c.op = op;
        c.count = bytes / dataTypeSize(type) + 5;
        c.inPlace = inPlace;
        c.seed = seed++;
        ASSERT_EQ(runCase(automatic, c), "") << c.describe();
      }
    }
  }
  // Shards past a slot, in parts: 96 MiB + 5 elements (shards of 24 MiB on 4 ranks: two parts, the second
  // with every shard's rest and the tail; below the ring's start); 4 slots + 16 bytes (on 4 ranks the first
  // shard's second part is 16 bytes, the others' empty); a reduce-scatter of 20 MiB + 16 bytes per rank.
  const std::size_t slot = std::size_t{16} << 20;
  const std::vector<std::pair<Collective, std::size_t>> partCases = {
      {Collective::AllReduce, (std::size_t{96} << 20) / sizeof(float) + 5},
      {Collective::AllReduce, (static_cast<std::size_t>(devices.size()) * slot + 16) / sizeof(float)},
      {Collective::ReduceScatter, ((std::size_t{20} << 20) + 16) / sizeof(float)}};
  for (const auto& [collective, count] : partCases) {
    for (const bool inPlace : {false, true}) {
      CollCase c;
      c.collective = collective;
      c.type = DataType::F32;
      c.op = ReduceOp::Sum;
      c.count = count;
      c.inPlace = inPlace;
      c.seed = seed++;
      ASSERT_EQ(runCase(pushed, c), "") << c.describe();
    }
  }
  std::printf("16 MiB: %s\n96 MiB, PEERLINK_COLL_PUSH=1: %s\n",
              automatic.describeChoice(Collective::AllReduce, std::size_t{16} << 20).c_str(),
              pushed.describeChoice(Collective::AllReduce, std::size_t{96} << 20).c_str());
}

// A two-shot reduce from 4 MiB per rank cuts the count among the non-root ranks only, on 32 blocks (below,
// every rank reduces a shard on a block per SM; reduceTwoShotSharesRoot, rootedTwoShotBlocks): forced
// two-shot at both sides of that line, the first and the last rank as root, in place and out.
TEST(CommunicatorTwoShotReduce, BothSidesOfTheRootShardLine) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  Communicator comm(devices, paramsWith({{"PEERLINK_ALGO", "TWOSHOT"}}));
  for (const std::size_t bytes : {std::size_t{2} << 20, std::size_t{8} << 20}) {
    for (const int root : {0, comm.size() - 1}) {
      for (const bool inPlace : {false, true}) {
        CollCase c;
        c.collective = Collective::Reduce;
        c.type = DataType::F32;
        c.op = ReduceOp::Sum;
        c.count = bytes / 4 + 7;
        c.root = root;
        c.inPlace = inPlace;
        c.seed = (bytes >> 20) + static_cast<std::uint64_t>(root);
        ASSERT_EQ(runCase(comm, c), "") << c.describe();
      }
    }
  }
}

}  // namespace
}  // namespace peerlink::testing
