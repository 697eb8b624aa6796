// Send/recv groups in LL lines (comm_launch_p2p_ll.hpp): each rank's jobs as its kernel takes them. A sender
// and its receiver must place each message at the same line of the pair's slot, counting the pair's earlier
// messages of the group in call order, or the receiver would wait for lines no one writes.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "coll/comm_launch_p2p_ll.hpp"
#include "kernels/coll_kernels.cuh"

namespace peerlink::coll {
namespace {

using kernels::CollP2pLlArgs;

// A send/recv pair of `count` f32 elements from rank `from` (buffer `src`) to rank `to` (buffer `dst`).
SendRecvPair pairOf(int from, int to, std::size_t count, std::uintptr_t src, std::uintptr_t dst) {
  SendRecvPair t;
  t.send.collective = t.recv.collective = Collective::SendRecv;
  t.send.type = t.recv.type = DataType::F32;
  t.send.count = t.recv.count = count;
  t.send.rank = t.recv.peer = from;
  t.send.peer = t.recv.rank = to;
  t.send.isSend = true;
  t.send.send = reinterpret_cast<const void*>(src);
  t.recv.recv = reinterpret_cast<void*>(dst);
  return t;
}

// Every rank's jobs of `group` on `ranks` ranks, or an empty vector where they do not fit.
std::vector<CollP2pLlArgs> placed(const std::vector<SendRecvPair>& group, int ranks = 4) {
  std::vector<CollP2pLlArgs> args(static_cast<std::size_t>(ranks));
  if (!placeP2pLlJobs(group, args)) return {};
  return args;
}

TEST(P2pLlJobs, PairsMessagesShareTheSlotInCallOrder) {
  // 0 -> 1 twice (10 then 3 elements: 40 bytes = 5 lines, then 12 bytes = 2 lines), 1 -> 0 once, 2 -> 1 once.
  const auto args = placed({pairOf(0, 1, 10, 0x1000, 0x2000), pairOf(1, 0, 4, 0x3000, 0x4000),
                            pairOf(0, 1, 3, 0x5000, 0x6000), pairOf(2, 1, 7, 0x7000, 0x8000)});
  ASSERT_EQ(args.size(), 4u);
  const CollP2pLlArgs& zero = args[0];
  ASSERT_EQ(zero.nsends, 2);
  EXPECT_EQ(zero.sends[0].peer, 1);
  EXPECT_EQ(zero.sends[0].src, reinterpret_cast<const void*>(0x1000));
  EXPECT_EQ(zero.sends[0].dst, nullptr);
  EXPECT_EQ(zero.sends[0].bytes, 40u);
  EXPECT_EQ(zero.sends[0].lineOffset, 0u);
  EXPECT_EQ(zero.sends[1].lineOffset, 5u);  // after the pair's first message
  EXPECT_EQ(zero.sends[1].bytes, 12u);
  ASSERT_EQ(zero.nrecvs, 1);
  EXPECT_EQ(zero.recvs[0].peer, 1);
  EXPECT_EQ(zero.recvs[0].dst, reinterpret_cast<void*>(0x4000));
  EXPECT_EQ(zero.recvs[0].src, nullptr);
  EXPECT_EQ(zero.recvs[0].lineOffset, 0u);
  const CollP2pLlArgs& one = args[1];
  ASSERT_EQ(one.nrecvs, 3);  // the receiver's view of the same slots
  EXPECT_EQ(one.recvs[0].peer, 0);
  EXPECT_EQ(one.recvs[0].lineOffset, 0u);
  EXPECT_EQ(one.recvs[1].peer, 0);
  EXPECT_EQ(one.recvs[1].lineOffset, 5u);
  EXPECT_EQ(one.recvs[1].dst, reinterpret_cast<void*>(0x6000));
  EXPECT_EQ(one.recvs[2].peer, 2);
  EXPECT_EQ(one.recvs[2].lineOffset, 0u);  // another sender's slot
  ASSERT_EQ(one.nsends, 1);
  EXPECT_EQ(one.sends[0].peer, 0);
  EXPECT_EQ(one.sends[0].lineOffset, 0u);
  EXPECT_EQ(args[3].nsends, 0);  // not in the group
  EXPECT_EQ(args[3].nrecvs, 0);
}

TEST(P2pLlJobs, SelfSendsAreCopiesAndEmptyMessagesNothing) {
  const auto args =
      placed({pairOf(2, 2, 6, 0x1000, 0x2000), pairOf(2, 0, 0, 0x3000, 0x4000), pairOf(0, 2, 2, 0x5000, 0x6000)});
  ASSERT_EQ(args.size(), 4u);
  const CollP2pLlArgs& two = args[2];
  EXPECT_EQ(two.nsends, 0);  // the self-send is a receive; the empty one is left out
  ASSERT_EQ(two.nrecvs, 2);
  EXPECT_EQ(two.recvs[0].peer, 2);
  EXPECT_EQ(two.recvs[0].src, reinterpret_cast<const void*>(0x1000));
  EXPECT_EQ(two.recvs[0].dst, reinterpret_cast<void*>(0x2000));
  EXPECT_EQ(two.recvs[1].peer, 0);
  EXPECT_EQ(two.recvs[1].lineOffset, 0u);  // a self-send takes no line of any slot
  EXPECT_EQ(args[0].nrecvs, 0);
  EXPECT_EQ(args[0].nsends, 1);
}

TEST(P2pLlJobs, WhatDoesNotFitIsNone) {
  const std::size_t slotElements = kernels::kCollP2pLlMaxBytes / 4;
  // A pair's lines fill its slot exactly; one element more does not fit.
  EXPECT_FALSE(placed({pairOf(0, 1, slotElements, 0x1000, 0x2000)}).empty());
  EXPECT_TRUE(placed({pairOf(0, 1, slotElements, 0x1000, 0x2000), pairOf(0, 1, 1, 0x3000, 0x4000)}).empty());
  // Other pairs have slots of their own.
  EXPECT_FALSE(placed({pairOf(0, 1, slotElements, 0x1000, 0x2000), pairOf(2, 1, 1, 0x3000, 0x4000)}).empty());
  // More than kCollMaxJobs receives on one rank, or sends.
  std::vector<SendRecvPair> many;
  for (int k = 0; k <= kernels::kCollMaxJobs; ++k) many.push_back(pairOf(0, 1, 1, 0x1000, 0x2000 + 64 * k));
  EXPECT_TRUE(placed(many).empty());
  std::vector<SendRecvPair> fanOut;  // 17 sends from rank 0, to 8 ranks' receives at most 3 each
  for (int k = 0; k <= kernels::kCollMaxJobs; ++k) fanOut.push_back(pairOf(0, 1 + k % 7, 1, 0x1000, 0x2000));
  EXPECT_TRUE(placed(fanOut, 8).empty());
  many.pop_back();
  EXPECT_FALSE(placed(many).empty());
}

}  // namespace
}  // namespace peerlink::coll
