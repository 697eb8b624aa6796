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

// A transfer of `count` f32 elements from rank `from` (buffer `src`) to rank `to` (buffer `dst`).
Transfer transfer(int from, int to, std::size_t count, std::uintptr_t src, std::uintptr_t dst) {
  Transfer t;
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

TEST(P2pLlJobs, PairsMessagesShareTheSlotInCallOrder) {
  // 0 -> 1 twice (10 then 3 elements: 40 bytes = 5 lines, then 12 bytes = 2 lines), 1 -> 0 once, 2 -> 1 once.
  const std::vector<Transfer> group = {transfer(0, 1, 10, 0x1000, 0x2000), transfer(1, 0, 4, 0x3000, 0x4000),
                                       transfer(0, 1, 3, 0x5000, 0x6000), transfer(2, 1, 7, 0x7000, 0x8000)};
  const auto zero = p2pLlJobs(group, 0);
  ASSERT_TRUE(zero.has_value());
  ASSERT_EQ(zero->sends.size(), 2u);
  EXPECT_EQ(zero->sends[0].peer, 1);
  EXPECT_EQ(zero->sends[0].src, reinterpret_cast<const void*>(0x1000));
  EXPECT_EQ(zero->sends[0].dst, nullptr);
  EXPECT_EQ(zero->sends[0].bytes, 40u);
  EXPECT_EQ(zero->sends[0].lineOffset, 0u);
  EXPECT_EQ(zero->sends[1].lineOffset, 5u);  // after the pair's first message
  EXPECT_EQ(zero->sends[1].bytes, 12u);
  ASSERT_EQ(zero->recvs.size(), 1u);
  EXPECT_EQ(zero->recvs[0].peer, 1);
  EXPECT_EQ(zero->recvs[0].dst, reinterpret_cast<void*>(0x4000));
  EXPECT_EQ(zero->recvs[0].src, nullptr);
  EXPECT_EQ(zero->recvs[0].lineOffset, 0u);
  const auto one = p2pLlJobs(group, 1);
  ASSERT_TRUE(one.has_value());
  ASSERT_EQ(one->recvs.size(), 3u);  // the receiver's view of the same slots
  EXPECT_EQ(one->recvs[0].peer, 0);
  EXPECT_EQ(one->recvs[0].lineOffset, 0u);
  EXPECT_EQ(one->recvs[1].peer, 0);
  EXPECT_EQ(one->recvs[1].lineOffset, 5u);
  EXPECT_EQ(one->recvs[1].dst, reinterpret_cast<void*>(0x6000));
  EXPECT_EQ(one->recvs[2].peer, 2);
  EXPECT_EQ(one->recvs[2].lineOffset, 0u);  // another sender's slot
  ASSERT_EQ(one->sends.size(), 1u);
  EXPECT_EQ(one->sends[0].peer, 0);
  EXPECT_EQ(one->sends[0].lineOffset, 0u);
  const auto three = p2pLlJobs(group, 3);  // not in the group
  ASSERT_TRUE(three.has_value());
  EXPECT_TRUE(three->sends.empty());
  EXPECT_TRUE(three->recvs.empty());
}

TEST(P2pLlJobs, SelfSendsAreCopiesAndEmptyMessagesNothing) {
  const std::vector<Transfer> group = {transfer(2, 2, 6, 0x1000, 0x2000), transfer(2, 0, 0, 0x3000, 0x4000),
                                       transfer(0, 2, 2, 0x5000, 0x6000)};
  const auto two = p2pLlJobs(group, 2);
  ASSERT_TRUE(two.has_value());
  EXPECT_TRUE(two->sends.empty());  // the self-send is a receive; the empty one is left out
  ASSERT_EQ(two->recvs.size(), 2u);
  EXPECT_EQ(two->recvs[0].peer, 2);
  EXPECT_EQ(two->recvs[0].src, reinterpret_cast<const void*>(0x1000));
  EXPECT_EQ(two->recvs[0].dst, reinterpret_cast<void*>(0x2000));
  EXPECT_EQ(two->recvs[1].peer, 0);
  EXPECT_EQ(two->recvs[1].lineOffset, 0u);  // a self-send takes no line of any slot
  const auto zero = p2pLlJobs(group, 0);
  ASSERT_TRUE(zero.has_value());
  EXPECT_TRUE(zero->recvs.empty());
  ASSERT_EQ(zero->sends.size(), 1u);
}

TEST(P2pLlJobs, WhatDoesNotFitIsNone) {
  const std::size_t slotElements = kernels::kCollP2pLlMaxBytes / 4;
  // A pair's lines fill its slot exactly; one byte more does not fit, nor a tail line per message past it.
  EXPECT_TRUE(p2pLlJobs({transfer(0, 1, slotElements, 0x1000, 0x2000)}, 0).has_value());
  EXPECT_FALSE(p2pLlJobs({transfer(0, 1, slotElements, 0x1000, 0x2000), transfer(0, 1, 1, 0x3000, 0x4000)}, 1));
  // Other pairs have slots of their own.
  EXPECT_TRUE(p2pLlJobs({transfer(0, 1, slotElements, 0x1000, 0x2000), transfer(2, 1, 1, 0x3000, 0x4000)}, 1));
  // More than kCollMaxJobs receives (or sends) on one rank.
  std::vector<Transfer> many;
  for (int k = 0; k <= kernels::kCollMaxJobs; ++k) many.push_back(transfer(0, 1, 1, 0x1000, 0x2000 + 64 * k));
  EXPECT_FALSE(p2pLlJobs(many, 1).has_value());
  EXPECT_FALSE(p2pLlJobs(many, 0).has_value());
  many.pop_back();
  EXPECT_TRUE(p2pLlJobs(many, 1).has_value());
}

}  // namespace
}  // namespace peerlink::coll
