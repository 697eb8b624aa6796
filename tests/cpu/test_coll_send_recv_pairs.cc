// Send/recv calls paired at groupEnd (matchSendRecvs, coll/comm_validation.cc): the k-th send from r to p with
// the k-th recv on p from r, in call order, and the errors that name a call without a partner or a pair whose
// count or type differ.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "coll/comm_state.hpp"
#include "coll/comm_validation.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

CommState fourRanks() {
  CommState state;
  state.nranks = 4;
  state.devices = {0, 1, 2, 3};
  return state;
}

CallArgs sendCall(int rank, int peer, std::size_t count, DataType type = DataType::F32) {
  CallArgs call;
  call.collective = Collective::SendRecv;
  call.rank = rank;
  call.peer = peer;
  call.count = count;
  call.type = type;
  call.isSend = true;
  return call;
}

CallArgs recvCall(int rank, int peer, std::size_t count, DataType type = DataType::F32) {
  CallArgs call = sendCall(rank, peer, count, type);
  call.isSend = false;
  return call;
}

// The message of the Error `calls` make matchSendRecvs throw ("" if it does not).
std::string pairingError(const std::vector<CallArgs>& calls) {
  try {
    matchSendRecvs(fourRanks(), calls);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidUsage);
    return error.what();
  }
  return "";
}

TEST(PairTransfers, ARingShiftPairsEachSendWithItsPeersRecv) {
  std::vector<CallArgs> calls;
  for (int r = 0; r < 4; ++r) {
    calls.push_back(recvCall(r, (r + 3) % 4, 10 + r));  // recvs first: the order of calls does not matter
  }
  for (int r = 0; r < 4; ++r) calls.push_back(sendCall(r, (r + 1) % 4, 10 + (r + 1) % 4));
  const std::vector<SendRecvPair> pairs = matchSendRecvs(fourRanks(), calls);
  ASSERT_EQ(pairs.size(), 4u);
  for (const SendRecvPair& t : pairs) {
    EXPECT_TRUE(t.send.isSend);
    EXPECT_FALSE(t.recv.isSend);
    EXPECT_EQ(t.recv.rank, t.send.peer);
    EXPECT_EQ(t.recv.peer, t.send.rank);
    EXPECT_EQ(t.recv.count, t.send.count);
  }
}

TEST(PairTransfers, SeveralSendsBetweenOnePairMatchTheirRecvsInCallOrder) {
  int a = 0;
  int b = 0;
  int x = 0;
  int y = 0;
  CallArgs sendA = sendCall(0, 1, 5);
  sendA.send = &a;
  CallArgs sendB = sendCall(0, 1, 5);
  sendB.send = &b;
  CallArgs recvX = recvCall(1, 0, 5);
  recvX.recv = &x;
  CallArgs recvY = recvCall(1, 0, 5);
  recvY.recv = &y;
  const std::vector<SendRecvPair> pairs = matchSendRecvs(fourRanks(), {recvX, sendA, recvY, sendB});
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].send.send, &a);
  EXPECT_EQ(pairs[0].recv.recv, &x);
  EXPECT_EQ(pairs[1].send.send, &b);
  EXPECT_EQ(pairs[1].recv.recv, &y);
  // A send to itself pairs with the rank's own recv from itself.
  EXPECT_EQ(matchSendRecvs(fourRanks(), {sendCall(2, 2, 3), recvCall(2, 2, 3)}).size(), 1u);
}

TEST(PairTransfers, ACallWithoutAPartnerOrAMismatchedPairIsNamed) {
  EXPECT_NE(pairingError({sendCall(0, 1, 5)}).find("no matching recv on rank 1 from rank 0"), std::string::npos);
  EXPECT_NE(pairingError({recvCall(1, 0, 5)}).find("no matching send from rank 0 to rank 1"), std::string::npos);
  // A recv on the wrong rank leaves both unmatched; the send is named first.
  EXPECT_NE(pairingError({sendCall(0, 1, 5), recvCall(2, 0, 5)}).find("no matching recv on rank 1 from rank 0"),
            std::string::npos);
  const std::string count = pairingError({sendCall(0, 1, 5), recvCall(1, 0, 6)});
  EXPECT_NE(count.find("sends 5 x f32 to rank 1, whose recv expects 6 x f32"), std::string::npos) << count;
  EXPECT_NE(count.find("(GPU 0)"), std::string::npos) << count;
  const std::string type = pairingError({sendCall(3, 1, 8, DataType::F16), recvCall(1, 3, 8, DataType::BF16)});
  EXPECT_NE(type.find("sends 8 x f16 to rank 1, whose recv expects 8 x bf16"), std::string::npos) << type;
  EXPECT_EQ(pairingError({sendCall(0, 1, 5), recvCall(1, 0, 5)}), "");
}

}  // namespace
}  // namespace peerlink::coll
