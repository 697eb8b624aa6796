// A send/recv group across processes (src/coll/p2p_plan.hpp): every rank plans from its own calls, and the
// plans must agree pair by pair (the same directions in LL lines at the same lines, the same rounds with the
// same pieces), and carried out on the host they must deliver every message whole.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "coll/p2p_plan.hpp"
#include "kernels/coll_kernels.cuh"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

struct Message {
  int from = 0;
  int to = 0;
  std::size_t bytes = 0;
};

// Each rank's calls for the group's messages: a rank's sends and recvs interleaved at random, each pair's
// messages in the group's order on both ends.
std::vector<std::vector<P2pCall>> callsOf(const std::vector<Message>& messages, int n, std::mt19937& rng,
                                          std::vector<std::vector<std::size_t>>& messageOf) {
  std::vector<std::vector<P2pCall>> calls(static_cast<std::size_t>(n));
  messageOf.assign(static_cast<std::size_t>(n), {});
  for (int r = 0; r < n; ++r) {
    // The rank's part of the group: its sends, then its recvs, then shuffled keeping each (peer, direction)
    // in the group's order.
    std::vector<std::pair<P2pCall, std::size_t>> mine;
    for (std::size_t m = 0; m < messages.size(); ++m) {
      if (messages[m].from == r) mine.push_back({{true, messages[m].to, messages[m].bytes}, m});
      if (messages[m].to == r && messages[m].from != r)
        mine.push_back({{false, messages[m].from, messages[m].bytes}, m});
      if (messages[m].to == r && messages[m].from == r) mine.push_back({{false, r, messages[m].bytes}, m});
    }
    // Random stable interleaving: repeatedly take the next of a random (peer, direction) stream.
    while (!mine.empty()) {
      const std::size_t pick = std::uniform_int_distribution<std::size_t>(0, mine.size() - 1)(rng);
      // The first call of the picked call's stream.
      std::size_t first = pick;
      for (std::size_t i = 0; i < pick; ++i) {
        if (mine[i].first.isSend == mine[pick].first.isSend && mine[i].first.peer == mine[pick].first.peer) {
          first = i;
          break;
        }
      }
      calls[static_cast<std::size_t>(r)].push_back(mine[first].first);
      messageOf[static_cast<std::size_t>(r)].push_back(mine[first].second);
      mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(first));
    }
  }
  return calls;
}

void runGroup(const std::vector<Message>& messages, int n, std::size_t slot, bool ll, std::mt19937& rng,
              const std::string& what) {
  std::vector<std::vector<std::size_t>> messageOf;
  const std::vector<std::vector<P2pCall>> calls = callsOf(messages, n, rng, messageOf);
  std::vector<P2pPlan> plans;
  for (int r = 0; r < n; ++r) plans.push_back(planPointToPoint(r, n, calls[static_cast<std::size_t>(r)], slot, ll));
  // Data: message m's bytes are (m * 131 + i) mod 251.
  std::vector<std::vector<std::vector<unsigned char>>> sendData(static_cast<std::size_t>(n));
  std::vector<std::vector<std::vector<unsigned char>>> recvData(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < calls[static_cast<std::size_t>(r)].size(); ++c) {
      const P2pCall& call = calls[static_cast<std::size_t>(r)][c];
      const std::size_t m = messageOf[static_cast<std::size_t>(r)][c];
      std::vector<unsigned char> bytes(call.bytes);
      for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>((m * 131 + i) % 251);
      sendData[static_cast<std::size_t>(r)].push_back(call.isSend ? bytes : std::vector<unsigned char>());
      recvData[static_cast<std::size_t>(r)].push_back(std::vector<unsigned char>(call.isSend ? 0 : call.bytes, 0));
    }
  }
  // LL: the masks agree, and each direction's k-th message sits at the same lines on both ends.
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      const bool rHasP = (plans[static_cast<std::size_t>(r)].llMask >> p) & 1u;
      const bool pHasR = (plans[static_cast<std::size_t>(p)].llMask >> r) & 1u;
      EXPECT_EQ(rHasP, pHasR) << what << ": LL masks of ranks " << r << " and " << p;
      std::vector<P2pLlMessage> sent;
      std::vector<P2pLlMessage> heard;
      for (const P2pLlMessage& s : plans[static_cast<std::size_t>(r)].llSends) {
        if (s.peer == p) sent.push_back(s);
      }
      for (const P2pLlMessage& h : plans[static_cast<std::size_t>(p)].llRecvs) {
        if (h.peer == r) heard.push_back(h);
      }
      ASSERT_EQ(sent.size(), heard.size()) << what << ": LL messages " << r << " -> " << p;
      EXPECT_LE(sent.size(), kP2pLlMessagesPerPair);
      for (std::size_t k = 0; k < sent.size(); ++k) {
        EXPECT_EQ(sent[k].lineOffset, heard[k].lineOffset) << what;
        ASSERT_EQ(sent[k].bytes, heard[k].bytes) << what;
        std::memcpy(recvData[static_cast<std::size_t>(p)][heard[k].call].data(),
                    sendData[static_cast<std::size_t>(r)][sent[k].call].data(), sent[k].bytes);
      }
    }
  }
  // Messages to itself.
  for (int r = 0; r < n; ++r) {
    for (const auto& [send, recv] : plans[static_cast<std::size_t>(r)].selfCopies) {
      recvData[static_cast<std::size_t>(r)][recv] = sendData[static_cast<std::size_t>(r)][send];
    }
  }
  // Rounds: a pair meets in the same rounds from both ends; the receiver pulls what the sender put in its
  // window slot for it in that round.
  std::size_t rounds = 0;
  for (const P2pPlan& plan : plans) rounds = std::max(rounds, plan.rounds.size());
  std::vector<std::vector<unsigned char>> windows(static_cast<std::size_t>(n),
                                                  std::vector<unsigned char>(slot * static_cast<std::size_t>(n)));
  for (std::size_t j = 0; j < rounds; ++j) {
    for (int r = 0; r < n; ++r) {
      const auto& mine = plans[static_cast<std::size_t>(r)].rounds;
      for (int p = 0; p < n; ++p) {
        const auto& theirs = plans[static_cast<std::size_t>(p)].rounds;
        const bool rMeets = j < mine.size() && ((mine[j].mask >> p) & 1u);
        const bool pMeets = j < theirs.size() && ((theirs[j].mask >> r) & 1u);
        EXPECT_EQ(rMeets, pMeets) << what << ": round " << j << ", ranks " << r << " and " << p;
      }
      if (j >= mine.size()) continue;
      for (const P2pPiece& piece : mine[j].sends) {
        ASSERT_LE(piece.bytes, slot);
        std::memcpy(windows[static_cast<std::size_t>(r)].data() + p2pSlotOffset(piece.peer, slot),
                    sendData[static_cast<std::size_t>(r)][piece.call].data() + piece.offset, piece.bytes);
      }
    }
    for (int r = 0; r < n; ++r) {
      const auto& mine = plans[static_cast<std::size_t>(r)].rounds;
      if (j >= mine.size()) continue;
      EXPECT_LE(mine[j].recvs.size(), static_cast<std::size_t>(kernels::kCollMaxJobs)) << what;
      for (const P2pPiece& piece : mine[j].recvs) {
        std::memcpy(recvData[static_cast<std::size_t>(r)][piece.call].data() + piece.offset,
                    windows[static_cast<std::size_t>(piece.peer)].data() + p2pSlotOffset(r, slot), piece.bytes);
      }
    }
  }
  for (int r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < calls[static_cast<std::size_t>(r)].size(); ++c) {
      if (calls[static_cast<std::size_t>(r)][c].isSend) continue;
      const std::size_t m = messageOf[static_cast<std::size_t>(r)][c];
      std::vector<unsigned char> expected(messages[m].bytes);
      for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<unsigned char>((m * 131 + i) % 251);
      EXPECT_EQ(recvData[static_cast<std::size_t>(r)][c], expected) << what << ": message " << m << " on rank " << r;
    }
  }
}

// A rank's messages to itself pair up in call order, empty calls left out (NCCL's no-ops); both the LL/window plan
// and the staged plan's ops take them from here.
TEST(P2pPlan, MessagesToItselfPairUpInCallOrderEmptyOnesLeftOut) {
  using Pairs = std::vector<std::pair<std::size_t, std::size_t>>;
  const std::vector<P2pCall> calls = {{true, 1, 8},  {true, 1, 16}, {false, 1, 0}, {false, 2, 4},
                                      {false, 1, 8}, {true, 1, 0},  {false, 1, 16}};
  EXPECT_EQ(selfMessages(calls, 1), (Pairs{{0, 4}, {1, 6}}));
  EXPECT_EQ(selfMessages(calls, 0), Pairs{});
  EXPECT_THROW(selfMessages({{true, 0, 8}}, 0), Error);
  EXPECT_THROW(selfMessages({{true, 0, 8}, {false, 0, 16}}, 0), Error);
}

TEST(P2pPlan, RandomGroupsAgreeAndDeliverEveryMessage) {
  std::mt19937 rng(2024);
  const std::size_t sizes[] = {0, 1, 7, 8, 100, 4096, 70000, 262144, 262145, 300000, 1000000};
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 2 + trial % 7;
    const std::size_t slot = trial % 2 == 0 ? 4096 : 131072;
    std::vector<Message> messages;
    const int count = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < count; ++i) {
      Message m;
      m.from = static_cast<int>(rng() % static_cast<unsigned>(n));
      m.to = static_cast<int>(rng() % static_cast<unsigned>(n));
      m.bytes = sizes[rng() % (sizeof sizes / sizeof sizes[0])];
      messages.push_back(m);
    }
    runGroup(messages, n, slot, trial % 5 != 0, rng,
             "trial " + std::to_string(trial) + " (" + std::to_string(n) + " ranks)");
    if (HasFailure()) return;
  }
}

TEST(P2pPlan, SmallPairsGoInLlLinesAndLargeOnesThroughTheWindow) {
  const P2pPlan small = planPointToPoint(0, 4, {{true, 1, 1024}, {false, 3, 64}}, 1 << 20, true);
  EXPECT_EQ(small.llMask, (1u << 1) | (1u << 3));
  EXPECT_TRUE(small.rounds.empty());
  // Past LL's largest message: pieces of a slot, one a round.
  const P2pPlan large = planPointToPoint(0, 4, {{true, 1, 5 << 20}}, 1 << 20, true);
  EXPECT_EQ(large.llMask, 0u);
  ASSERT_EQ(large.rounds.size(), 5u);
  for (const P2pRound& round : large.rounds) EXPECT_EQ(round.mask, 1u << 1);
  // Three small messages to one peer: more than a pair carries in lines.
  const P2pPlan many = planPointToPoint(0, 2, {{true, 1, 8}, {true, 1, 8}, {true, 1, 8}}, 1 << 20, true);
  EXPECT_EQ(many.llMask, 0u);
  EXPECT_EQ(many.rounds.size(), 3u);
  // PEERLINK_PROTO=SIMPLE: no lines.
  EXPECT_EQ(planPointToPoint(0, 4, {{true, 1, 1024}}, 1 << 20, false).llMask, 0u);
}

TEST(P2pPlan, BadGroupsAreUsageErrors) {
  EXPECT_THROW(planPointToPoint(0, 2, {{true, 2, 8}}, 4096, true), Error);
  EXPECT_THROW(planPointToPoint(0, 2, {{true, 0, 8}}, 4096, true), Error);                  // no recv
  EXPECT_THROW(planPointToPoint(0, 2, {{true, 0, 8}, {false, 0, 16}}, 4096, true), Error);  // sizes differ
  EXPECT_NO_THROW(planPointToPoint(0, 2, {{false, 0, 8}, {true, 0, 8}}, 4096, true));
}

}  // namespace
}  // namespace peerlink::coll
