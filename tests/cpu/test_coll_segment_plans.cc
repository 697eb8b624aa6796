// Large calls on the staged plans in segments (coll/segment_plans.hpp): every collective cut with a stage so small
// that a call takes many segments, each segment's plan run by the host executor over the part of the user's buffers
// its extents name, must give the whole call's closed form; the same for send/recv groups cut into pieces.
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/comm_launch_plan.hpp"
#include "coll/host_executor.hpp"
#include "coll/plan_staged.hpp"
#include "coll/planned_calls.hpp"
#include "coll/segment_plans.hpp"
#include "coll_lists.hpp"
#include "peerlink/error.hpp"
#include "plan_test_support.hpp"

namespace peerlink::coll {
namespace {

constexpr std::size_t kSize = 4;  // f32

// A world with every kind of pair: 0 -> 1 host-staged, the rest direct.
RankLinks mixedLinks(int n) {
  RankLinks links = RankLinks::uniform(n, PairWay::Direct);
  links.set(0, 1, PairWay::HostStaged);
  links.set(n - 1, 0, PairWay::HostStaged);
  return links;
}

// Copies between a plan buffer and the user buffers its extents name: gather (user -> plan) or scatter (plan ->
// user). A buffer the plan declares empty (a non-root's broadcast input, reduce output) has no user buffer either.
void moveExtents(const std::vector<BufferExtent>& extents, Bytes& planBuffer, bool gather) {
  if (planBuffer.empty()) return;
  for (const BufferExtent& extent : extents) {
    ASSERT_LE((extent.begin + extent.elements) * kSize, planBuffer.size());
    auto* user = static_cast<std::byte*>(const_cast<void*>(extent.base));
    std::byte* plan = planBuffer.data() + extent.begin * kSize;
    if (gather) {
      std::memcpy(plan, user, extent.elements * kSize);
    } else {
      std::memcpy(user, plan, extent.elements * kSize);
    }
  }
}

// The call of `count` run segment by segment, each segment's plan over the part of the user's buffers it names; ""
// or what differs from the closed form, or a segment whose scratch or stage is larger than `capBytes`.
std::string runSegments(Collective collective, int n, std::size_t count, int root, std::size_t capBytes,
                        const std::vector<StagedSegment>& segments) {
  const Plan whole = buildStagedPlan(collective, n, count, root, false, 0, DataType::F32, mixedLinks(n));
  std::vector<Bytes> send = makeSendData(whole, ReduceOp::Sum, 7);
  std::vector<Bytes> recv(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    recv[static_cast<std::size_t>(r)].assign(recvElementsOf(collective, n, count, r, root) * kSize, std::byte{0x5a});
  }
  std::size_t covered = 0;
  for (const auto& [segment, plan] : segments) {
    if (segment.start != covered) return "segments leave a gap or overlap";
    covered += segment.count;
    std::vector<HostRankBuffers> buffers = allocateHostBuffers(plan, std::byte{0xa5});
    for (int r = 0; r < n; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (buffers[i].scratch.size() > capBytes || buffers[i].hostStage.size() > capBytes) {
        return "a segment's scratch or stage is larger than the cap";
      }
      moveExtents(segmentExtents(collective, BufferKind::Input, n, count, segment, send[i].data(), kSize),
                  buffers[i].input, true);
      moveExtents(segmentExtents(collective, BufferKind::Output, n, count, segment, recv[i].data(), kSize),
                  buffers[i].output, true);
    }
    executePlan(plan, ReduceOp::Sum, buffers);
    for (int r = 0; r < n; ++r) {
      const auto i = static_cast<std::size_t>(r);
      moveExtents(segmentExtents(collective, BufferKind::Output, n, count, segment, recv[i].data(), kSize),
                  buffers[i].output, false);
    }
  }
  if (covered != count) return "segments do not cover the count";
  const std::vector<Bytes> want = hostReduceReference(collective, DataType::F32, ReduceOp::Sum, n, count, root, send);
  const Tolerance tol = reduces(collective) ? tolerance(DataType::F32, ReduceOp::Sum, n) : Tolerance{};
  for (std::size_t r = 0; r < want.size(); ++r) {
    if (auto mismatch = findMismatch(DataType::F32, tol, want[r], recv[r]))
      return "rank " + std::to_string(r) + ": " + *mismatch;
  }
  return "";
}

// planSegments' segments with a stage of `capBytes`, each a plan holding its whole data.
std::string runInSegments(Collective collective, int n, std::size_t count, int root, std::size_t capBytes) {
  const std::vector<PlanSegment> cuts = planSegments(collective, n, count, kSize, capBytes);
  if (count > 0 && cuts.size() < 2 && count * kSize > capBytes) return "one segment for a call past the cap";
  std::vector<StagedSegment> segments;
  for (const PlanSegment& segment : cuts) {
    segments.push_back(
        {segment, buildStagedPlan(collective, n, segment.count, root, false, 3, DataType::F32, mixedLinks(n))});
  }
  return runSegments(collective, n, count, root, capBytes, segments);
}

TEST(SegmentPlans, EveryCollectiveInManySegments) {
  for (const Collective collective : kEveryCollective) {
    if (collective == Collective::SendRecv) continue;  // groups: GroupPieces below
    for (const int n : {2, 3, 4}) {
      for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{37}, std::size_t{130}}) {
        for (const std::size_t cap : {std::size_t{64 * 4}, std::size_t{1} << 20}) {
          EXPECT_EQ(runInSegments(collective, n, count, n - 1, cap), "")
              << collectiveName(collective) << " n=" << n << " count=" << count << " cap=" << cap;
        }
      }
    }
  }
}

// stagedSegments: plans whose staging reuses slots, so a long call is one segment where it fits kSegmentChunks; a
// stage too small for the pipeline's depth halves the chunk; every segment's plan still gives the closed form.
TEST(SegmentPlans, StagedSegmentsReuseSlotsAndFitTheCap) {
  constexpr std::size_t kChunkBytes = 64 * kSize;
  for (const Collective collective : kEveryCollective) {
    if (collective == Collective::SendRecv) continue;
    for (const int n : {2, 3, 5}) {
      for (const std::size_t count : {std::size_t{0}, std::size_t{37}, std::size_t{5000}, std::size_t{40000}}) {
        for (const std::size_t cap : {std::size_t{4} << 10, std::size_t{512}}) {
          const std::vector<StagedSegment> segments =
              stagedSegments(collective, n, count, n - 1, DataType::F32, mixedLinks(n), kChunkBytes, cap);
          EXPECT_EQ(runSegments(collective, n, count, n - 1, cap, segments), "")
              << collectiveName(collective) << " n=" << n << " count=" << count << " cap=" << cap;
          // At most kSegmentChunks chunks of a block, or of all-reduce's shard: far fewer segments than plans
          // holding their whole data would need.
          const std::size_t perSegment = kSegmentChunks * 64 * (collective == Collective::AllReduce ? n : 1);
          EXPECT_EQ(segments.size(), std::max<std::size_t>(1, (count + perSegment - 1) / perSegment))
              << collectiveName(collective) << " n=" << n << " count=" << count;
        }
      }
    }
  }
  // 5 ranks without P2P, 2 KiB chunks: an all-reduce keeps 8 hops in flight, more than 4 KiB of stage holds, so its
  // chunk is halved until it fits.
  const RankLinks none = RankLinks::uniform(5, PairWay::HostStaged);
  const std::vector<StagedSegment> halved =
      stagedSegments(Collective::AllReduce, 5, 100000, 0, DataType::F32, none, 2048, 4096);
  ASSERT_EQ(halved.size(), 1u);
  EXPECT_LT(halved.front().plan.chunkElements, 512u);
  for (const RankLayout& rank : halved.front().plan.ranks) EXPECT_LE(rank.hostStageElements * kSize, 4096u);
}

// Calls of up to kPlanLlMaxBytes a rank go in LL lines through host memory, larger ones as plans; send/recv groups by
// their messages (plannedPairLines, below).
TEST(SegmentPlans, SmallCallsGoInLinesThroughHostMemory) {
  EXPECT_EQ(plannedLineBytes(Collective::AllReduce, 0, DataType::F32), 0u);
  EXPECT_EQ(plannedLineBytes(Collective::AllReduce, 1, DataType::F32), 4u);
  EXPECT_EQ(plannedLineBytes(Collective::AllGather, kPlanLlMaxBytes / 4, DataType::F32), kPlanLlMaxBytes);
  EXPECT_EQ(plannedLineBytes(Collective::AllGather, kPlanLlMaxBytes / 4 + 1, DataType::F32), 0u);
  EXPECT_EQ(plannedLineBytes(Collective::Broadcast, kPlanLlMaxBytes / 2, DataType::BF16), kPlanLlMaxBytes);
  EXPECT_EQ(plannedLineBytes(Collective::SendRecv, 100, DataType::F32), 0u);
  // A slot holds the largest message's lines (16 bytes for every 8 of payload), a parity's slots every sender's.
  EXPECT_EQ(std::size_t{1} << kPlanLlSlotShift, 2 * kPlanLlMaxBytes);
  EXPECT_EQ(planLlAreaBytes(4), 8 * (std::size_t{1} << kPlanLlSlotShift));
}

// What the LL copy kernel (coll_ll.cu) does with a send/recv group's lines, on the host: every rank sends every peer
// its message, or a token where it has none for that peer, and copies its own; every rank takes from every peer a
// message into where it lands, or a token where its mask says so. Returns, by destination, the source whose bytes
// land there; throws where a rank waits for a message a peer sends as a token or the other way round (the kernel
// would wait for lines that never come, or read a token as data).
std::map<void*, const void*> runLines(const PairLines& lines) {
  std::map<void*, const void*> landed;
  const std::size_t n = lines.ranks.size();
  for (std::size_t r = 0; r < n; ++r) {
    const PairLines::Rank& receiver = lines.ranks[r];
    if (receiver.to[r] != nullptr && receiver.from[r] != nullptr) landed[receiver.from[r]] = receiver.to[r];
    for (std::size_t p = 0; p < n; ++p) {
      if (p == r) continue;
      const bool token = (receiver.tokens >> p & 1u) != 0;
      const void* sent = lines.ranks[p].to[r];
      if (token != (sent == nullptr)) throw std::logic_error("a message where a token is awaited, or the other way");
      if (!token) {
        if (receiver.from[p] == nullptr) throw std::logic_error("a message with nowhere to land");
        landed[receiver.from[p]] = sent;
      }
    }
  }
  return landed;
}

// A send/recv group of one process goes in LL lines where every rank takes part and sends each peer at most one
// message, all of one size up to kPlanLlMaxBytes: each message lands where its pair says, tokens elsewhere.
TEST(SegmentPlans, SendRecvGroupsOfOneSizeGoInLines) {
  char buffers[4][2][8] = {};
  const auto message = [&](int from, int to, std::size_t bytes) {
    return PairMessage{from, to, buffers[from][0], buffers[to][1] + from, bytes};
  };
  // The ring shift of 3 ranks: rank r hears rank r - 1 and a token from rank r + 1.
  std::vector<PairMessage> shift = {message(2, 0, 64), message(0, 1, 64), message(1, 2, 64)};
  const PairLines lines = plannedPairLines(shift, 3);
  ASSERT_EQ(lines.bytes, 64u);
  EXPECT_EQ(lines.ranks[0].tokens, 1u << 1);
  EXPECT_EQ(lines.ranks[1].tokens, 1u << 2);
  const std::map<void*, const void*> landed = runLines(lines);
  ASSERT_EQ(landed.size(), 3u);
  for (const PairMessage& m : shift) EXPECT_EQ(landed.at(m.dst), m.src);
  // Both ways between 2 ranks, with a rank's message to itself: no token at all.
  std::vector<PairMessage> both = {message(0, 1, 8), message(1, 0, 8), message(1, 1, 8)};
  const PairLines pairs = plannedPairLines(both, 2);
  ASSERT_EQ(pairs.bytes, 8u);
  EXPECT_EQ(pairs.ranks[0].tokens | pairs.ranks[1].tokens, 0u);
  EXPECT_EQ(runLines(pairs).size(), 3u);
  EXPECT_EQ(runLines(pairs).at(buffers[1][1] + 1), buffers[1][0]);
  // One message among 4 ranks leaves two ranks out: not lines (and not the plans, whose barriers wait for every
  // rank: pair by pair).
  EXPECT_EQ(plannedPairLines({message(0, 1, 8)}, 4).bytes, 0u);
  EXPECT_FALSE(everyRankTakesPart({message(0, 1, 8)}, 4));
  EXPECT_FALSE(everyRankTakesPart({message(0, 1, 8), message(1, 2, 8)}, 4)) << "rank 3 left out";
  EXPECT_TRUE(everyRankTakesPart({message(0, 1, 8), message(2, 3, 8)}, 4)) << "every rank sends or receives";
  EXPECT_TRUE(everyRankTakesPart({message(0, 1, 8), message(2, 2, 8)}, 3)) << "a message to itself counts";
  EXPECT_FALSE(everyRankTakesPart({}, 2));
  EXPECT_FALSE(everyRankTakesPart({PairMessage{0, 5, nullptr, nullptr, 8}}, 2)) << "rank 5 is none of the world's";
  EXPECT_EQ(plannedPairLines({message(0, 1, 8), message(1, 0, 8)}, 2).bytes, 8u);
  // Two messages of one pair, sizes that differ, nothing to send, more than a slot holds: staged plans.
  EXPECT_EQ(plannedPairLines({message(0, 1, 8), message(0, 1, 8), message(1, 0, 8)}, 2).bytes, 0u);
  EXPECT_EQ(plannedPairLines({message(0, 1, 8), message(1, 0, 16)}, 2).bytes, 0u);
  EXPECT_EQ(plannedPairLines({message(0, 1, 0), message(1, 0, 0)}, 2).bytes, 0u);
  EXPECT_EQ(plannedPairLines({message(0, 1, kPlanLlMaxBytes), message(1, 0, kPlanLlMaxBytes)}, 2).bytes,
            kPlanLlMaxBytes);
  EXPECT_EQ(plannedPairLines({message(0, 1, kPlanLlMaxBytes + 1), message(1, 0, kPlanLlMaxBytes + 1)}, 2).bytes, 0u);
  EXPECT_EQ(plannedPairLines({}, 2).bytes, 0u);
}

// The way each call takes through host memory, which `peerlink coll` records in its rows and `peerlink plan` costs.
TEST(SegmentPlans, EveryCallHasAWayThroughHostMemory) {
  constexpr std::size_t kRing = std::size_t{8} << 20;  // PEERLINK_COLL_HOST_RING's default
  const auto way = [&](Collective collective, std::size_t bytes, int nranks, bool acrossProcesses,
                       bool oneKernel = true) {
    return std::string(
        stagedWayName(stagedWayOf(collective, bytes, DataType::U8, nranks, kRing, oneKernel, acrossProcesses)));
  };
  EXPECT_EQ(way(Collective::AllReduce, 64 << 10, 2, false), "host_lines");
  EXPECT_EQ(way(Collective::AllReduce, 1 << 20, 2, false), "host_ring");
  EXPECT_EQ(way(Collective::Broadcast, 32 << 20, 2, false), "host_chain");  // a chain goes further than the rounds
  EXPECT_EQ(way(Collective::AllReduce, 64 << 20, 2, false), "plan_steps");
  EXPECT_EQ(way(Collective::AllToAll, 1 << 20, 3, false), "plan_kernel");  // three ranks: no exchange
  EXPECT_EQ(way(Collective::AllToAll, 1 << 20, 3, false, false), "plan_steps");
  EXPECT_EQ(way(Collective::AllToAll, 1 << 20, 2, true), "host_ring");  // two ranks' exchange
  // Send/recv as the ring shift: one process's group; across processes only two ranks' exchange, else pair by pair.
  EXPECT_EQ(way(Collective::SendRecv, 8, 3, false), "host_lines");
  EXPECT_EQ(way(Collective::SendRecv, 8, 3, true), "pair_by_pair");
  EXPECT_EQ(way(Collective::SendRecv, 8, 2, true), "host_lines");
  EXPECT_EQ(way(Collective::SendRecv, 1 << 20, 2, true), "host_ring");
  EXPECT_EQ(way(Collective::SendRecv, 16 << 20, 2, true), "pair_by_pair");
  EXPECT_EQ(way(Collective::SendRecv, 16 << 20, 2, false), "plan_steps");
}

// Across processes a rank sees only its own calls: a two-rank exchange, each rank deciding from its send and its
// receive alone, goes in lines exactly when the group seen whole would, and both ranks decide alike.
TEST(SegmentPlans, ATwoRankExchangeGoesInLinesFromEachRanksOwnCalls) {
  char sends[2][8] = {};
  char recvs[2][8] = {};
  const auto sides = [](int rank, std::size_t count, DataType type) {
    return std::vector<ExchangeSide>{{true, 1 - rank, count, type}, {false, 1 - rank, count, type}};
  };
  for (const std::size_t count : {std::size_t{1}, std::size_t{1000}, kPlanLlMaxBytes / 4, kPlanLlMaxBytes / 4 + 1}) {
    SCOPED_TRACE(count);
    const PairLines zero = exchangePairLines(sides(0, count, DataType::F32), 0, 2, sends[0], recvs[0]);
    const PairLines one = exchangePairLines(sides(1, count, DataType::F32), 1, 2, sends[1], recvs[1]);
    const PairLines whole =
        plannedPairLines({{0, 1, sends[0], recvs[1], count * 4}, {1, 0, sends[1], recvs[0], count * 4}}, 2);
    EXPECT_EQ(zero.bytes, whole.bytes);
    EXPECT_EQ(one.bytes, whole.bytes);
    if (whole.bytes == 0) continue;
    // Each rank's own part is the whole group's: its message out, the other's in, no token.
    for (const auto& [rank, lines] : {std::pair{0, zero}, std::pair{1, one}}) {
      const PairLines::Rank& mine = lines.ranks[static_cast<std::size_t>(rank)];
      const PairLines::Rank& expected = whole.ranks[static_cast<std::size_t>(rank)];
      EXPECT_EQ(mine.to, expected.to);
      EXPECT_EQ(mine.from, expected.from);
      EXPECT_EQ(mine.tokens, 0u);
    }
  }
  EXPECT_EQ(exchangePairLines(sides(0, 64, DataType::F32), 0, 2, sends[0], recvs[0]).bytes, 256u);
  EXPECT_EQ(exchangePairLines(sides(0, 0, DataType::F32), 0, 2, sends[0], recvs[0]).bytes, 0u);   // nothing to send
  EXPECT_EQ(exchangePairLines(sides(0, 64, DataType::F32), 0, 3, sends[0], recvs[0]).bytes, 0u);  // three ranks
  const std::vector<ExchangeSide> oneWay = {{true, 1, 64, DataType::F32}};
  EXPECT_EQ(exchangePairLines(oneWay, 0, 2, sends[0], recvs[0]).bytes, 0u);
  const std::vector<ExchangeSide> unequal = {{true, 1, 64, DataType::F32}, {false, 1, 32, DataType::F32}};
  EXPECT_EQ(exchangePairLines(unequal, 0, 2, sends[0], recvs[0]).bytes, 0u);
  // Messages to itself beside the exchange (copied by the rank itself) leave the lines as the other rank sees them.
  const std::vector<ExchangeSide> withSelf = {{true, 0, 7, DataType::I8},
                                              {true, 1, 64, DataType::F32},
                                              {false, 0, 7, DataType::I8},
                                              {false, 1, 64, DataType::F32}};
  const PairLines lines = exchangePairLines(withSelf, 0, 2, sends[0], recvs[0]);
  EXPECT_EQ(lines.bytes, 256u);
  EXPECT_EQ(lines.ranks[0].to[1], sends[0]);
  EXPECT_EQ(lines.ranks[0].from[1], recvs[0]);
  EXPECT_EQ(lines.ranks[0].to[0], nullptr);
}

// The checker above fails a group whose token masks disagree with what the ranks send.
TEST(SegmentPlans, TheLineCheckerCatchesATokenWhereAMessageIsSent) {
  char a = 0, b = 0;
  PairLines lines = plannedPairLines({{0, 1, &a, &b, 8}, {1, 0, &b, &a, 8}}, 2);
  ASSERT_EQ(lines.bytes, 8u);
  EXPECT_NO_THROW(runLines(lines));
  lines.ranks[1].tokens = 1u << 0;
  EXPECT_THROW(runLines(lines), std::logic_error);
}

// `peerlink coll --explain` says which send/recv groups of one process go in lines: the ring shift up to
// kPlanLlMaxBytes a rank.
TEST(SegmentPlans, TheRingShiftOfSmallMessagesGoesInLines) {
  const RankLinks none = RankLinks::uniform(3, PairWay::HostStaged);
  EXPECT_TRUE(
      stagedCallShape(Collective::SendRecv, kPlanLlMaxBytes / 4, DataType::F32, none, kPlanChunkBytes, 0).lines);
  const StagedCallShape large =
      stagedCallShape(Collective::SendRecv, kPlanLlMaxBytes / 4 + 1, DataType::F32, none, kPlanChunkBytes, 0);
  EXPECT_FALSE(large.lines);
  EXPECT_GT(large.steps, 0u);
}

TEST(SegmentPlans, SegmentsAreAlignedAndFitTheCap) {
  // all-reduce: the count's elements; all-gather: one block per rank, so a quarter per segment on 4 ranks.
  const std::vector<PlanSegment> flat = planSegments(Collective::AllReduce, 4, 1000, 4, 1024);
  ASSERT_EQ(flat.size(), 4u);
  EXPECT_EQ(flat[0].count, 256u);
  EXPECT_EQ(flat[3].start, 768u);
  EXPECT_EQ(flat[3].count, 232u);
  const std::vector<PlanSegment> blocks = planSegments(Collective::AllGather, 4, 1000, 4, 1024);
  ASSERT_EQ(blocks.size(), 16u);
  EXPECT_EQ(blocks[0].count, 64u);
  // 16-byte multiples: 1000 bytes of bf16 stage hold 500 elements, cut to 496.
  EXPECT_EQ(planSegments(Collective::Broadcast, 4, 10000, 2, 1000).front().count, 496u);
  EXPECT_EQ(planSegments(Collective::AllReduce, 4, 0, 4, 1024).size(), 1u);
  EXPECT_THROW(planSegments(Collective::AllToAll, 8, 100, 4, 64), Error);  // 8 bytes a block
}

TEST(SegmentPlans, BlockExtentsFollowTheUsersBlocks) {
  std::vector<std::byte> user(4 * 100 * kSize);
  const std::vector<BufferExtent> extents =
      segmentExtents(Collective::AllGather, BufferKind::Output, 4, 100, {60, 40}, user.data(), kSize);
  ASSERT_EQ(extents.size(), 4u);
  EXPECT_EQ(extents[2].begin, 80u);
  EXPECT_EQ(extents[2].elements, 40u);
  EXPECT_EQ(extents[2].base, user.data() + (2 * 100 + 60) * kSize);
  // all-gather's input is one block: one extent.
  EXPECT_EQ(segmentExtents(Collective::AllGather, BufferKind::Input, 4, 100, {60, 40}, user.data(), kSize).size(), 1u);
}

// A group's pieces run one after another, each plan over the parts of the pairs' buffers its extents name, must
// deliver every pair; no rank's host stage past `cap`. "" or what went wrong.
std::string runPieces(const std::vector<PointToPoint>& group, int n, const std::vector<StagedPiece>& pieces,
                      std::size_t cap) {
  std::vector<Bytes> sends;
  std::vector<Bytes> recvs;
  std::vector<const void*> sendBases;
  std::vector<const void*> recvBases;
  for (std::size_t i = 0; i < group.size(); ++i) {
    Bytes data(group[i].count * kSize);
    for (std::size_t e = 0; e < group[i].count; ++e) storeElement(DataType::F32, data.data(), e, double(i * 1000 + e));
    sends.push_back(std::move(data));
    recvs.emplace_back(group[i].count * kSize, std::byte{0x5a});
  }
  for (std::size_t i = 0; i < group.size(); ++i) {
    sendBases.push_back(sends[i].data());
    recvBases.push_back(recvs[i].data());
  }
  for (const auto& [piece, plan] : pieces) {
    std::vector<HostRankBuffers> buffers = allocateHostBuffers(plan, std::byte{0xa5});
    const std::vector<RankExtents> extents = pieceExtents(piece, n, sendBases, recvBases, kSize);
    for (std::size_t r = 0; r < buffers.size(); ++r) {
      if (buffers[r].hostStage.size() > cap) return "rank " + std::to_string(r) + "'s stage is past the cap";
      moveExtents(extents[r].input, buffers[r].input, true);
    }
    executePlan(plan, ReduceOp::Sum, buffers);
    for (std::size_t r = 0; r < buffers.size(); ++r) moveExtents(extents[r].output, buffers[r].output, false);
  }
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (recvs[i] != sends[i]) return "pair " + std::to_string(i) + " did not arrive";
  }
  return "";
}

TEST(SegmentPlans, GroupPiecesCarryEveryPair) {
  const int n = 3;
  const RankLinks links = mixedLinks(n);
  const std::vector<PointToPoint> group = {{0, 1, 70}, {1, 0, 9}, {2, 0, 33}, {0, 2, 0}, {1, 2, 41}, {2, 2, 5}};
  // Pieces whose plans hold their whole data: a rank's sends of a piece at most 16 elements.
  const std::size_t cap = 16 * kSize;
  std::vector<StagedPiece> whole;
  for (GroupPiece& piece : groupPieces(group, n, kSize, cap)) {
    Plan plan = buildStagedSendRecvPlan(piece.pairs, DataType::F32, 3, links);
    whole.push_back({std::move(piece), std::move(plan)});
  }
  EXPECT_EQ(whole.size(), 9u);  // ranks 1 and 2 send twice: 8 elements a pair a piece, 70 / 8 pieces
  EXPECT_EQ(runPieces(group, n, whole, cap), "");
  // stagedPieces: the slots reused, so the same stage holds far longer pieces (one here), chunks of 4 elements.
  const std::vector<StagedPiece> slots = stagedPieces(group, n, DataType::F32, links, 4 * kSize, cap);
  EXPECT_EQ(slots.size(), 1u);
  EXPECT_EQ(runPieces(group, n, slots, cap), "");
  // A long group in pieces of kSegmentChunks chunks (of 16 elements) of a rank's sends.
  const std::vector<PointToPoint> longer = {{0, 1, 16 * kSegmentChunks + 10}, {1, 0, 3}};
  const std::vector<StagedPiece> two =
      stagedPieces(longer, 2, DataType::F32, RankLinks::uniform(2, PairWay::HostStaged), 16 * kSize, 1024);
  EXPECT_EQ(two.size(), 2u);
  EXPECT_EQ(runPieces(longer, 2, two, 1024), "");
  EXPECT_TRUE(groupPieces({{0, 1, 0}}, n, kSize, cap).empty());
  EXPECT_THROW(groupPieces(group, n, kSize, 8), Error);
}

}  // namespace
}  // namespace peerlink::coll
