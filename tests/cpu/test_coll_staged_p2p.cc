// Send/recv through the host stages (coll/staged_p2p.hpp): the ops of each rank's group, and a host model of the
// protocol -- every rank running its ops in order, a wait blocking a rank until its peer's count allows it -- over
// random groups of 2-5 ranks: every group completes (no rank waits forever on another) and every message arrives
// whole, across several groups in a row (the counts carry over).
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/staged_p2p.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

using Kind = StagedP2pOp::Kind;

TEST(StagedP2p, OpsAlternateSlotsRoundByRound) {
  // Rank 1 sends 40 bytes to rank 0 and 70 to rank 2, receives 20 from rank 2, sends itself 8; slots of 16 bytes.
  const std::vector<P2pCall> calls = {{true, 0, 40}, {true, 2, 70}, {false, 2, 20}, {true, 1, 8}, {false, 1, 8}};
  const std::vector<StagedP2pOp> ops = stagedP2pOps(calls, 1, 16);
  ASSERT_FALSE(ops.empty());
  EXPECT_EQ(ops[0].kind, Kind::Copy);
  EXPECT_EQ(ops[0].call, 4u);
  EXPECT_EQ(ops[0].from, 3u);
  // Round 0: the sends to 0 and 2, then the recv from 2; every pair's first chunk in slot 0.
  EXPECT_EQ(ops[1].kind, Kind::Send);
  EXPECT_EQ(ops[1].peer, 0);
  EXPECT_TRUE(ops[1].firstOfPair);
  EXPECT_EQ(ops[2].peer, 2);
  EXPECT_EQ(ops[3].kind, Kind::Recv);
  EXPECT_EQ(ops[3].bytes, 16u);
  // Round 1 in slot 1, not first; the last chunk of 70 bytes is 6.
  EXPECT_EQ(ops[4].slot, 1);
  EXPECT_FALSE(ops[4].firstOfPair);
  EXPECT_EQ(ops.back().kind, Kind::Send);
  EXPECT_EQ(ops.back().peer, 2);
  EXPECT_EQ(ops.back().offset, 64u);
  EXPECT_EQ(ops.back().bytes, 6u);
  EXPECT_EQ(ops.back().slot, 0);  // the fifth chunk
  EXPECT_EQ(stagedP2pSlotOffset(3, 1, 16), 7u * 16u);
}

TEST(StagedP2p, BadGroupsAreRefused) {
  EXPECT_THROW(stagedP2pOps({{true, 0, 8}}, 0, 16), Error);                  // a send to itself without its recv
  EXPECT_THROW(stagedP2pOps({{true, 0, 8}, {false, 0, 16}}, 0, 16), Error);  // sizes differ
  EXPECT_THROW(stagedP2pOps({{true, 1, 8}}, 0, 24), Error);                  // not a multiple of 16
  EXPECT_TRUE(stagedP2pOps({{true, 1, 0}, {false, 1, 0}}, 0, 16).empty());
  EXPECT_TRUE(stagedP2pOps({{true, 0, 0}}, 0, 16).empty());  // an empty send to itself is no message, as in NCCL
}

// The protocol on the host: counts as plan_p2p.cu keeps them, stages as the slots, one op at a time per rank.
struct Model {
  Model(int ranks, std::size_t slot)
      : n(ranks),
        slotBytes(slot),
        sent(cells(ranks), 0),
        taken(cells(ranks), 0),
        ready(cells(ranks), 0),
        freed(cells(ranks), 0),
        stage(static_cast<std::size_t>(ranks), std::vector<std::uint8_t>(static_cast<std::size_t>(2 * ranks) * slot)) {}
  static std::size_t cells(int ranks) { return static_cast<std::size_t>(ranks * ranks); }
  std::size_t at(int a, int b) const { return static_cast<std::size_t>(a * n + b); }

  // Runs every rank's ops; false if some rank can never go on.
  bool run(const std::vector<std::vector<StagedP2pOp>>& ops,
           std::vector<std::vector<std::vector<std::uint8_t>>>& buffers) {
    std::vector<std::size_t> next(ops.size(), 0);  // by rank: its next op
    for (bool moved = true; moved;) {
      moved = false;
      for (int r = 0; r < n; ++r) {
        while (next[r] < ops[r].size()) {
          const StagedP2pOp& op = ops[r][next[r]];
          auto& mine = buffers[static_cast<std::size_t>(r)];
          if (op.kind == Kind::Copy) {
            mine[op.call] = mine[op.from];
          } else if (op.kind == Kind::Send) {
            const std::uint64_t count = sent[at(r, op.peer)];
            const std::uint64_t need = op.firstOfPair || count == 0 ? count : count - 1;
            if (freed[at(r, op.peer)] < need) break;  // the receiver has not taken the slot's last chunk
            std::copy_n(mine[op.call].begin() + static_cast<std::ptrdiff_t>(op.offset), op.bytes,
                        stage[static_cast<std::size_t>(r)].begin() +
                            static_cast<std::ptrdiff_t>(stagedP2pSlotOffset(op.peer, op.slot, slotBytes)));
            ready[at(op.peer, r)] = ++sent[at(r, op.peer)];
          } else {
            if (ready[at(r, op.peer)] < taken[at(r, op.peer)] + 1) break;
            const auto& from = stage[static_cast<std::size_t>(op.peer)];
            const auto begin = from.begin() + static_cast<std::ptrdiff_t>(stagedP2pSlotOffset(r, op.slot, slotBytes));
            std::copy_n(begin, op.bytes, mine[op.call].begin() + static_cast<std::ptrdiff_t>(op.offset));
            freed[at(op.peer, r)] = ++taken[at(r, op.peer)];
          }
          ++next[r];
          moved = true;
        }
      }
    }
    for (int r = 0; r < n; ++r) {
      if (next[r] != ops[r].size()) return false;
    }
    return true;
  }

  int n;
  std::size_t slotBytes;
  std::vector<std::uint64_t> sent, taken;   // [rank * n + peer]: the rank's own counts
  std::vector<std::uint64_t> ready, freed;  // [rank * n + peer]: what the peer published into the rank's flags
  std::vector<std::vector<std::uint8_t>> stage;
};

TEST(StagedP2p, RandomGroupsCompleteAndDeliverEveryByte) {
  std::mt19937 random(5);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 2 + trial % 4;
    Model model(n, 16);
    for (int group = 0; group < 3; ++group) {  // counts carry over between groups
      // A random set of messages (several per pair, both ways, some to itself), each rank's calls in a random order
      // that keeps each pair's messages in order on both sides.
      struct Message {
        int from, to;
        std::size_t bytes;
      };
      std::vector<Message> messages;
      const int count = 1 + static_cast<int>(random() % 8);
      for (int m = 0; m < count; ++m) {
        messages.push_back(
            {static_cast<int>(random() % n), static_cast<int>(random() % n), static_cast<std::size_t>(random() % 90)});
      }
      std::vector<std::vector<P2pCall>> calls(static_cast<std::size_t>(n));
      std::vector<std::vector<std::vector<std::uint8_t>>> buffers(static_cast<std::size_t>(n));
      std::vector<std::pair<int, std::size_t>> recvOf;  // per message: (rank, call index) of its recv
      std::vector<std::vector<std::uint8_t>> data;
      for (std::size_t m = 0; m < messages.size(); ++m) {
        const Message& message = messages[m];
        std::vector<std::uint8_t> bytes(message.bytes);
        for (auto& b : bytes) b = static_cast<std::uint8_t>(random());
        data.push_back(bytes);
        calls[static_cast<std::size_t>(message.from)].push_back({true, message.to, message.bytes});
        buffers[static_cast<std::size_t>(message.from)].push_back(bytes);
        calls[static_cast<std::size_t>(message.to)].push_back({false, message.from, message.bytes});
        buffers[static_cast<std::size_t>(message.to)].push_back(std::vector<std::uint8_t>(message.bytes, 0));
        recvOf.emplace_back(message.to, calls[static_cast<std::size_t>(message.to)].size() - 1);
      }
      std::vector<std::vector<StagedP2pOp>> ops;
      for (int r = 0; r < n; ++r) ops.push_back(stagedP2pOps(calls[static_cast<std::size_t>(r)], r, 16));
      ASSERT_TRUE(model.run(ops, buffers)) << "trial " << trial << " group " << group << ": a rank waits forever";
      for (std::size_t m = 0; m < messages.size(); ++m) {
        const auto [rank, call] = recvOf[m];
        ASSERT_EQ(buffers[static_cast<std::size_t>(rank)][call], data[m]) << "trial " << trial << " message " << m;
      }
    }
  }
}

}  // namespace
}  // namespace peerlink::coll
