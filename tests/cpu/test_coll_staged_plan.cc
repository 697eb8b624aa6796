// Plans over a mix of direct, relayed and host-staged pairs (coll/plan_staged.hpp), run by the host executor for
// 2 to 8 ranks against the closed form, every collective, in and out of place, chunked and not, on worlds with no
// P2P at all, one pair (or one direction) forced to host staging, two islands joined only through host memory,
// relayed pairs and random mixes; and checkPlanLinks proving no transfer crosses a pair other than its way.
#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "coll/host_executor.hpp"
#include "coll/plan.hpp"
#include "coll/plan_staged.hpp"
#include "coll/rank_links.hpp"
#include "coll_lists.hpp"
#include "peerlink/error.hpp"
#include "plan_test_support.hpp"
#include "staged_worlds.hpp"

namespace peerlink::coll {
namespace {

bool hasInPlace(Collective collective) {
  return collective != Collective::AllToAll && collective != Collective::SendRecv;
}

TEST(StagedPlans, EveryCollectiveOnEveryWorldMatchesTheClosedForm) {
  std::vector<std::pair<DataType, ReduceOp>> typeOps;
  for (DataType type : kEveryDataType) {
    for (ReduceOp op : kEveryReduceOp) {
      if (reduceOpSupported(type, op)) typeOps.emplace_back(type, op);
    }
  }
  std::size_t rotation = 0;
  int runs = 0;
  for (int n = 2; n <= 8; ++n) {
    for (const StagedWorld& world : stagedWorlds(n)) {
      SCOPED_TRACE(world.name + ", " + std::to_string(n) + " ranks");
      for (Collective collective : kEveryCollective) {
        for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1001}}) {
          for (std::size_t chunk : {std::size_t{0}, std::size_t{64}}) {
            for (bool inPlace : {false, true}) {
              if (inPlace && !hasInPlace(collective)) continue;
              auto [type, op] = typeOps[rotation++ % typeOps.size()];
              if (!reduces(collective)) op = ReduceOp::Sum;
              const int root = static_cast<int>((count + rotation) % static_cast<std::size_t>(n));
              const Plan plan = buildStagedPlan(collective, n, count, root, inPlace, chunk, type, world.links);
              ASSERT_NO_THROW(checkPlanLinks(plan, world.links)) << planName(plan);
              ASSERT_EQ(runAndCompare(plan, op, static_cast<std::uint32_t>(rotation)), "");
              ++runs;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 3000);
}

TEST(StagedPlans, SendRecvGroupsGoEachPairsWay) {
  for (int n = 2; n <= 8; ++n) {
    for (const StagedWorld& world : stagedWorlds(n)) {
      // Every rank sends to every rank (itself too) a count of its own, and to its successor twice.
      std::vector<PointToPoint> pairs;
      for (int from = 0; from < n; ++from) {
        for (int to = 0; to < n; ++to) pairs.push_back({from, to, static_cast<std::size_t>(17 * from + 5 * to + 1)});
        pairs.push_back({from, (from + 1) % n, 33});
      }
      const Plan plan = buildStagedSendRecvPlan(pairs, DataType::I32, 8, world.links);
      ASSERT_NO_THROW(checkPlanLinks(plan, world.links)) << world.name;
      std::vector<Bytes> send(static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) {
        Bytes& bytes = send[static_cast<std::size_t>(r)];
        bytes.resize(plan.ranks[static_cast<std::size_t>(r)].sendElements * 4);
        for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>((r * 131 + i * 7) & 0xff);
      }
      const std::vector<Bytes> got = runPlanOnHost(plan, ReduceOp::Sum, send);
      // The expected receives, laid out as buildSendRecvPlan lays them.
      std::vector<Bytes> want(static_cast<std::size_t>(n));
      std::vector<std::size_t> sent(static_cast<std::size_t>(n), 0);
      for (const PointToPoint& pair : pairs) {
        const Bytes& from = send[static_cast<std::size_t>(pair.from)];
        const auto begin = from.begin() + static_cast<std::ptrdiff_t>(sent[static_cast<std::size_t>(pair.from)] * 4);
        want[static_cast<std::size_t>(pair.to)].insert(want[static_cast<std::size_t>(pair.to)].end(), begin,
                                                       begin + static_cast<std::ptrdiff_t>(pair.count * 4));
        sent[static_cast<std::size_t>(pair.from)] += pair.count;
      }
      EXPECT_EQ(got, want) << world.name << ", " << n << " ranks";
    }
  }
}

// The checker fails a plan that reads a peer's memory over a pair without peer access: the plain ring, on a
// world without P2P.
TEST(StagedPlans, LinkCheckRejectsPeerAccessWhereThereIsNone) {
  const RankLinks none = RankLinks::uniform(4, PairWay::HostStaged);
  const Plan ring = buildPlan(Collective::AllGather, Algorithm::Ring, 4, 100, 0, false, 0, DataType::F32);
  try {
    checkPlanLinks(ring, none);
    FAIL() << "the ring plan passed on a world without P2P";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::Internal);
    EXPECT_NE(std::string(error.what()).find("is host-staged"), std::string::npos) << error.what();
  }
  // A relay whose relay rank lacks peer access is refused.
  RankLinks bad = RankLinks::uniform(3, PairWay::HostStaged);
  bad.set(0, 2, PairWay::Relay, 1);
  EXPECT_THROW(validateRankLinks(bad), Error);
  EXPECT_THROW(buildStagedPlan(Collective::AllReduce, 3, 10, 0, false, 0, DataType::F32, bad), Error);
  // Links of another size.
  EXPECT_THROW(
      buildStagedPlan(Collective::AllReduce, 4, 10, 0, false, 0, DataType::F32, RankLinks::uniform(3, PairWay::Direct)),
      Error);
}

// With no P2P, no transfer touches another rank's device memory: every crossing goes through a host stage.
TEST(StagedPlans, NoP2pMovesEveryCrossingThroughHostMemory) {
  const RankLinks none = RankLinks::uniform(4, PairWay::HostStaged);
  for (Collective collective : kEveryCollective) {
    const Plan plan = buildStagedPlan(collective, 4, 1000, 1, false, 0, DataType::F32, none);
    std::size_t staged = 0;
    for (const Step& step : plan.steps) {
      for (const Transfer& transfer : step.transfers) {
        for (const BufferRef& src : transfer.srcs) {
          if (src.buffer != BufferKind::HostStage) {
            EXPECT_EQ(src.rank, transfer.executor) << describeTransfer(transfer);
          }
        }
        if (transfer.dst.buffer != BufferKind::HostStage) {
          EXPECT_EQ(transfer.dst.rank, transfer.executor) << describeTransfer(transfer);
        }
        if (transfer.dst.buffer == BufferKind::HostStage) staged += transfer.count;
      }
    }
    EXPECT_GT(staged, 0u) << collectiveName(collective);
  }
}

// Chunked, the host-to-device half of chunk c runs in the same step as the device-to-host half of chunk c+1 on
// the same pair: the halves overlap.
TEST(StagedPlans, ChunkedHalvesOverlap) {
  const RankLinks none = RankLinks::uniform(2, PairWay::HostStaged);
  const Plan plan = buildStagedPlan(Collective::SendRecv, 2, 1024, 0, false, 256, DataType::F32, none);
  ASSERT_EQ(plan.chunks, 4u);
  EXPECT_EQ(plan.steps.size(), 5u);  // 4 chunks, 2 phases, pipelined
  int overlapping = 0;
  for (const Step& step : plan.steps) {
    bool toHost = false;
    bool fromHost = false;
    for (const Transfer& transfer : step.transfers) {
      toHost = toHost || (transfer.dst.buffer == BufferKind::HostStage && transfer.dst.rank == 0);
      fromHost = fromHost || (transfer.srcs[0].buffer == BufferKind::HostStage && transfer.srcs[0].rank == 0);
    }
    overlapping += toHost && fromHost ? 1 : 0;
  }
  EXPECT_EQ(overlapping, 3);
  EXPECT_EQ(plan.ranks[0].hostStageElements, 1024u);
  // Unchunked, a staged hop is two steps; in a world of direct pairs the same plan has no host stage.
  EXPECT_EQ(buildStagedPlan(Collective::SendRecv, 2, 1024, 0, false, 0, DataType::F32, none).steps.size(), 2u);
  const Plan direct = buildStagedPlan(Collective::SendRecv, 2, 1024, 0, false, 0, DataType::F32,
                                      RankLinks::uniform(2, PairWay::Direct));
  EXPECT_EQ(direct.ranks[0].hostStageElements, 0u);
  EXPECT_EQ(direct.steps.size(), 1u);
}

TEST(StagedPlans, RingAvoidsHostStagedHops) {
  // Islands {0, 2} and {1, 3}: rank order crosses host memory four times, the best ring twice (the first such
  // ring in lexicographic order).
  const RankLinks islands = interleavedIslands(4);
  EXPECT_EQ(describeRing(islands, {0, 1, 2, 3}),
            "0 -> 1 -> 2 -> 3 -> 0 (4 host-staged hops: 0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0)");
  EXPECT_EQ(chooseRing(islands), (std::vector<int>{0, 1, 3, 2}));
  EXPECT_EQ(describeRing(islands, chooseRing(islands)), "0 -> 1 -> 3 -> 2 -> 0 (2 host-staged hops: 0 -> 1, 3 -> 2)");
  // Eight ranks in two interleaved islands: two crossings, not eight.
  const RankLinks eight = interleavedIslands(8);
  const std::vector<int> ring = chooseRing(eight);
  int staged = 0;
  for (std::size_t i = 0; i < ring.size(); ++i) {
    staged += eight.way(ring[i], ring[(i + 1) % ring.size()]) == PairWay::HostStaged ? 1 : 0;
  }
  EXPECT_EQ(staged, 2);
  // Rank order kept where it is as good; a relayed hop avoided where a direct ring exists.
  EXPECT_EQ(chooseRing(RankLinks::uniform(5, PairWay::HostStaged)), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(chooseRing(relayedEnds(4)), (std::vector<int>{0, 1, 3, 2}));
  EXPECT_EQ(describeRing(RankLinks::uniform(3, PairWay::Direct), {0, 1, 2}), "0 -> 1 -> 2 -> 0 (every hop direct)");
  EXPECT_TRUE(needsStagedPlans(islands));
  EXPECT_FALSE(needsStagedPlans(RankLinks::uniform(8, PairWay::Direct)));
}

}  // namespace
}  // namespace peerlink::coll
