// Communicators of 3, 4 and 8 ranks on however many GPUs the machine has (PEERLINK_COLL_SHARE_GPUS: ranks
// take the GPUs round-robin and share them), so the algorithms' n-rank paths — two-shot broadcast and
// reduce, tokens between non-root ranks, blocks of n - 1 peers — run against the host reference on a one-
// or two-GPU machine too. Every collective, a few types and ops, every size class, in place and out of
// place, under AUTO, TWOSHOT, SIMPLE, LL128 (PEERLINK_PROTO; LL128 lines wherever LL fits, n - 1 senders per
// scratch area) and PUSH (PEERLINK_COLL_PUSH=1), the rings, and the copy engines (PEERLINK_COLL_CE=1). What they
// measure is not speed: ranks on one GPU split its SMs.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "coll_lists.hpp"
#include "coll_test_support.hpp"

namespace peerlink::testing {
namespace {

constexpr const auto& kCollectives = kEveryCollective;

// Ranks 0..n-1 on GPUs 0, 1, ..., 0, 1, ...: neighbours sit on different GPUs where there are two.
std::vector<int> roundRobin(int ranks, int gpus) {
  std::vector<int> devices;
  for (int r = 0; r < ranks; ++r) devices.push_back(r % gpus);
  return devices;
}

// (ranks, configuration, collective); a configuration as in test_communicator.cc.
class SharedGpuCorrectness : public ::testing::TestWithParam<std::tuple<int, const char*, Collective>> {};

TEST_P(SharedGpuCorrectness, MatchesHostReference) {
  PEERLINK_REQUIRE_GPUS(1);
  int gpus = 0;
  PEERLINK_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  gpus = std::min(gpus, 2);  // two GPUs already mix local and peer ranks; more would only be slower to set up
  const auto [ranks, configuration, collective] = GetParam();
  std::vector<std::pair<std::string, std::string>> overrides = {{"PEERLINK_COLL_SHARE_GPUS", "1"}};
  const std::string config = configuration;
  if (config == "SIMPLE" || config == "LL128") {
    overrides.emplace_back("PEERLINK_PROTO", config);
  } else if (config == "PUSH") {
    overrides.emplace_back("PEERLINK_COLL_PUSH", "1");
  } else if (config == "CE") {
    overrides.emplace_back("PEERLINK_COLL_CE", "1");
  } else {
    overrides.emplace_back("PEERLINK_ALGO", config);
  }
  Communicator comm(roundRobin(ranks, gpus), paramsWith(overrides));
  ASSERT_EQ(comm.size(), ranks);
  const std::size_t n = static_cast<std::size_t>(ranks);
  // 2n+1: not divisible by the ranks; 100003: several LL lines per thread; 1M+5: past LL, several blocks;
  // 1 Mi: the same in 16-byte multiples (the ring reduce-scatter runs only where every block starts on one).
  const std::vector<std::size_t> counts = {
      0, 1, 2 * n + 1, 1003, 100003, (std::size_t{1} << 20) + 5, std::size_t{1} << 20};
  const std::vector<std::pair<DataType, ReduceOp>> kinds = {{DataType::F32, ReduceOp::Sum},
                                                            {DataType::BF16, ReduceOp::Avg},
                                                            {DataType::I8, ReduceOp::Max},
                                                            {DataType::U64, ReduceOp::Prod},
                                                            {DataType::F64, ReduceOp::Min}};
  std::uint64_t seed = 11;
  int cases = 0;
  for (const auto& [type, op] : kinds) {
    const ReduceOp used = reduces(collective) ? op : ReduceOp::Sum;
    if (!reduceOpSupported(type, used)) continue;
    for (const std::size_t count : counts) {
      if (count > 100003 && type != DataType::F32) continue;  // the large count once per collective
      for (const bool inPlace : {false, true}) {
        CollCase c;
        c.collective = collective;
        c.type = type;
        c.op = used;
        c.count = count;
        c.root = static_cast<int>(seed % n);  // every rank is root for some case
        c.inPlace = inPlace;
        c.reverseOrder = seed % 3 == 0;
        c.seed = seed++;
        ASSERT_EQ(runCase(comm, c), "") << ranks << " ranks on " << gpus << " GPUs, " << configuration;
        ++cases;
      }
    }
  }
  std::printf("%d ranks on %d GPUs, %s, %s: %d cases passed (1 MiB: %s)\n", ranks, gpus, collectiveName(collective),
              configuration, cases, comm.describeChoice(collective, 1 << 20).c_str());
}

std::string caseName(const ::testing::TestParamInfo<SharedGpuCorrectness::ParamType>& param) {
  return std::to_string(std::get<0>(param.param)) + "ranks_" + std::get<1>(param.param) + "_" +
         collectiveName(std::get<2>(param.param));
}

INSTANTIATE_TEST_SUITE_P(SeveralRanksPerGpu, SharedGpuCorrectness,
                         ::testing::Combine(::testing::Values(3, 4, 8),
                                            ::testing::Values("AUTO", "TWOSHOT", "SIMPLE", "LL128", "PUSH"),
                                            ::testing::ValuesIn(kCollectives)),
                         caseName);
// The copy engines (PEERLINK_COLL_CE=1): all-gather, all-to-all and all-reduce past LL and send/recv, some
// copies between two ranks of one GPU.
INSTANTIATE_TEST_SUITE_P(CopyEngines, SharedGpuCorrectness,
                         ::testing::Combine(::testing::Values(3, 4, 8), ::testing::Values("CE"),
                                            ::testing::Values(Collective::AllGather, Collective::AllToAll,
                                                              Collective::AllReduce, Collective::SendRecv)),
                         caseName);
// The rings (PEERLINK_ALGO=RING): broadcast, reduce, all-reduce and reduce-scatter along chains of 3-8
// ranks, some passing chunks to a rank on their own GPU.
INSTANTIATE_TEST_SUITE_P(Rings, SharedGpuCorrectness,
                         ::testing::Combine(::testing::Values(3, 4, 8), ::testing::Values("RING"),
                                            ::testing::Values(Collective::Broadcast, Collective::Reduce,
                                                              Collective::AllReduce, Collective::ReduceScatter)),
                         caseName);

TEST(SharedGpuCommunicator, NeedsTheSwitchToListAGpuTwice) {
  PEERLINK_REQUIRE_GPUS(1);
  EXPECT_THROW(Communicator({0, 0}, paramsWith({{"PEERLINK_COLL_SHARE_GPUS", "0"}})), Error);
  Communicator comm({0, 0}, paramsWith({{"PEERLINK_COLL_SHARE_GPUS", "1"}}));
  EXPECT_EQ(comm.size(), 2);
  EXPECT_EQ(comm.device(1), 0);
}

}  // namespace
}  // namespace peerlink::testing
