// The decisions of a communicator across nodes (src/coll/node_decisions.hpp): which worlds are multi-node, the
// mapping to MPI ranks, in place per rank, and the group calls each rank makes with its own pointers -- run here for
// every rank of 2-3 nodes x 1-4 ranks on host memory, each group call computed by its closed form, and every rank's
// result compared with the whole collective's closed form. What the GPU run adds is only the groups' own
// communicators (tests/mpi/comm_nodes_e2e.cc).
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/hierarchical_plan.hpp"
#include "coll/host_reduce.hpp"
#include "coll/node_decisions.hpp"
#include "net_test_data.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

std::vector<PeerIdentity> peersOn(const std::vector<std::uint64_t>& hosts) {
  std::vector<PeerIdentity> peers;
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    peers.push_back({static_cast<int>(r), hosts[r], "host" + std::to_string(hosts[r]), 100 + static_cast<int>(r), 0});
  }
  return peers;
}

TEST(NodeDecisions, OneHostIsNotMultiNode) {
  EXPECT_FALSE(multiNodeGrid(peersOn({7, 7, 7, 7})).has_value());
  EXPECT_FALSE(multiNodeGrid(peersOn({7})).has_value());
}

TEST(NodeDecisions, HostsFormNodesInRankOrder) {
  const auto grid = multiNodeGrid(peersOn({1, 1, 2, 2, 3, 3}));
  ASSERT_TRUE(grid.has_value());
  EXPECT_EQ(grid->nodes, 3);
  EXPECT_EQ(grid->ranksPerNode, 2);
  const auto single = multiNodeGrid(peersOn({5, 9}));
  ASSERT_TRUE(single.has_value());
  EXPECT_EQ(single->nodes, 2);
  EXPECT_EQ(single->ranksPerNode, 1);
}

TEST(NodeDecisions, UnevenOrInterleavedNodesAreRefused) {
  EXPECT_THROW(multiNodeGrid(peersOn({1, 1, 2})), Error);
  try {
    multiNodeGrid(peersOn({1, 2, 1, 2}));
    FAIL() << "interleaved ranks accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidUsage);
    EXPECT_NE(std::string(error.what()).find("grouped by node"), std::string::npos) << error.what();
  }
}

TEST(NodeDecisions, OneRankPerProcess) {
  EXPECT_NO_THROW(checkOneRankPerProcess({3}, {2, 2}));
  try {
    checkOneRankPerProcess({0, 1}, {2, 2});
    FAIL() << "two ranks in a process accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::Unsupported);
    EXPECT_NE(std::string(error.what()).find("ranks 0, 1"), std::string::npos) << error.what();
  }
}

TEST(NodeDecisions, MpiRanksMustBeTheCommunicators) {
  const auto peers = peersOn({1, 1, 2, 2});
  std::vector<MpiPlace> places;
  for (int r = 0; r < 4; ++r) places.push_back(mpiPlaceOf(r, 4, ""));
  EXPECT_EQ(mpiPlacementProblem(places, peers), "");

  std::vector<MpiPlace> swapped = places;
  std::swap(swapped[1], swapped[2]);
  const std::string outOfPlace = mpiPlacementProblem(swapped, peers);
  EXPECT_NE(outOfPlace.find("rank 1 (host host1, pid 101) is MPI rank 2"), std::string::npos) << outOfPlace;

  std::vector<MpiPlace> bigger = places;
  for (MpiPlace& place : bigger) place.mpiSize = 8;
  EXPECT_NE(mpiPlacementProblem(bigger, peers).find("MPI_COMM_WORLD of 8 ranks, the communicator has 4"),
            std::string::npos);

  // A rank that could not use MPI at all is named first, with its reason.
  std::vector<MpiPlace> broken = swapped;
  broken[3] = mpiPlaceOf(-1, 0, "MPI is not initialized (Open MPI v4.1.4)");
  const std::string problem = mpiPlacementProblem(broken, peers);
  EXPECT_NE(problem.find("rank 3 (host host2, pid 103) cannot use MPI for the transport between nodes: MPI is not "
                         "initialized"),
            std::string::npos)
      << problem;
  // Before MPI_COMM_WORLD is duplicated (collective), only whether every rank can use MPI is asked: ranks not yet
  // placed (-1) pass, one that cannot use MPI is named.
  std::vector<MpiPlace> unplaced(4, mpiPlaceOf(-1, 0, ""));
  EXPECT_EQ(mpiUsabilityProblem(unplaced, peers), "");
  unplaced[2] = mpiPlaceOf(-1, 0, "cannot load libpeerlink_mpi.so");
  EXPECT_NE(mpiUsabilityProblem(unplaced, peers).find("rank 2 (host host2, pid 102) cannot use MPI"), std::string::npos)
      << mpiUsabilityProblem(unplaced, peers);
  // A reason too long for the card is cut, not overrun.
  const MpiPlace longReason = mpiPlaceOf(0, 1, std::string(5000, 'x'));
  EXPECT_EQ(strnlen(longReason.problem, sizeof longReason.problem), sizeof longReason.problem - 1);
}

TEST(NodeDecisions, InPlaceAsTheApiSaysPerRank) {
  std::vector<std::byte> buffer(4096);
  std::byte* b = buffer.data();
  EXPECT_TRUE(callInPlace(Collective::AllReduce, 2, b, b, 10, 4));
  EXPECT_FALSE(callInPlace(Collective::AllReduce, 2, b, b + 40, 10, 4));
  EXPECT_TRUE(callInPlace(Collective::AllGather, 2, b + 80, b, 10, 4));
  EXPECT_FALSE(callInPlace(Collective::AllGather, 2, b, b, 10, 4));
  EXPECT_TRUE(callInPlace(Collective::ReduceScatter, 3, b, b + 120, 10, 4));
  EXPECT_FALSE(callInPlace(Collective::ReduceScatter, 3, b, b, 10, 4));
  EXPECT_FALSE(callInPlace(Collective::AllToAll, 0, b, b, 10, 4));
  EXPECT_FALSE(callInPlace(Collective::Reduce, 1, b, nullptr, 10, 4));
}

// Each rank decides in place from its own pointers, so the ranks' plans must make the same group calls of two or
// more members whether in place or not: only their buffers may differ. (A call of one member, a node of one rank,
// is the rank's own: in place may leave out a copy there.)
std::vector<const GroupCall*> sharedCalls(const HierarchicalPlan& plan) {
  std::vector<const GroupCall*> calls;
  for (const Phase& phase : plan.phases) {
    for (const GroupCall& call : phase.calls) {
      if (call.members.size() > 1) calls.push_back(&call);
    }
  }
  return calls;
}

TEST(NodeDecisions, InPlaceChangesNoGroupCall) {
  for (Collective collective : {Collective::AllReduce, Collective::Broadcast, Collective::Reduce, Collective::AllGather,
                                Collective::ReduceScatter}) {
    for (const NodeGrid grid : {NodeGrid{2, 2}, NodeGrid{3, 2}, NodeGrid{2, 3}, NodeGrid{2, 1}, NodeGrid{3, 4}}) {
      const HierarchicalPlan a =
          buildHierarchicalPlan(collective, grid, 1001, grid.size() - 1, false, 0, DataType::F32);
      const HierarchicalPlan b = buildHierarchicalPlan(collective, grid, 1001, grid.size() - 1, true, 0, DataType::F32);
      const std::vector<const GroupCall*> x = sharedCalls(a);
      const std::vector<const GroupCall*> y = sharedCalls(b);
      const std::string where = std::string(collectiveName(collective)) + " on " + std::to_string(grid.nodes) + " x " +
                                std::to_string(grid.ranksPerNode);
      ASSERT_EQ(x.size(), y.size()) << where;
      for (std::size_t c = 0; c < x.size(); ++c) {
        EXPECT_EQ(x[c]->scope, y[c]->scope) << where;
        EXPECT_EQ(x[c]->members, y[c]->members) << where;
        EXPECT_EQ(x[c]->collective, y[c]->collective) << where;
        EXPECT_EQ(x[c]->count, y[c]->count) << where;
        EXPECT_EQ(x[c]->root, y[c]->root) << where;
        EXPECT_EQ(x[c]->finishes, y[c]->finishes) << where;
      }
    }
  }
}

// The user's buffers of one rank as the API takes them.
struct UserBuffers {
  Bytes send, recv, scratch;  // in place: send is empty and `recv` the one buffer
  const void* sendPointer = nullptr;
  void* recvPointer = nullptr;
};

UserBuffers userBuffersOf(Collective collective, int n, std::size_t count, int rank, int root, bool inPlace,
                          const Bytes& data, std::size_t size, std::size_t scratchElements) {
  UserBuffers u;
  const std::size_t sendElements = sendElementsOf(collective, n, count, rank, root);
  const std::size_t recvElements = recvElementsOf(collective, n, count, rank, root);
  u.scratch.resize(scratchElements * size);
  if (!inPlace) {
    u.send = data;
    u.send.resize(std::max<std::size_t>(sendElements * size, 1));
    u.recv.resize(std::max<std::size_t>(recvElements * size, 1), std::byte{0x5a});
    u.sendPointer = u.send.data();
    u.recvPointer = recvElements > 0 ? u.recv.data() : nullptr;
    return u;
  }
  switch (collective) {
    case Collective::AllGather:
      u.recv.resize(count * static_cast<std::size_t>(n) * size, std::byte{0x5a});
      std::memcpy(u.recv.data() + count * static_cast<std::size_t>(rank) * size, data.data(), data.size());
      u.recvPointer = u.recv.data();
      u.sendPointer = u.recv.data() + count * static_cast<std::size_t>(rank) * size;
      break;
    case Collective::ReduceScatter:
      u.recv = data;
      u.sendPointer = u.recv.data();
      u.recvPointer = u.recv.data() + count * static_cast<std::size_t>(rank) * size;
      break;
    default:  // all-reduce, broadcast, reduce: send == recv
      u.recv.resize(count * size, std::byte{0x5a});
      if (!data.empty()) std::memcpy(u.recv.data(), data.data(), data.size());
      u.recvPointer = u.recv.data();
      u.sendPointer = u.recv.data();
      break;
  }
  return u;
}

// Every rank's member calls carried out group call by group call, each by its closed form over the members' send
// ranges; each rank's result read from its recv pointer.
void simulate(Collective collective, NodeGrid grid, std::size_t count, DataType type, ReduceOp op, bool inPlace) {
  const int n = grid.size();
  const int root = n - 1;
  const std::size_t size = dataTypeSize(type);
  const std::vector<Bytes> sends = testing::everySend(collective, type, n, count, root);
  std::vector<HierarchicalPlan> plans;
  std::vector<UserBuffers> users;
  std::vector<std::vector<MemberCall>> calls;
  for (int r = 0; r < n; ++r) {
    plans.push_back(buildHierarchicalPlan(collective, grid, count, root, inPlace, 0, type));
  }
  for (int r = 0; r < n; ++r) {
    const RankLayout& layout = plans[static_cast<std::size_t>(r)].plan.ranks[static_cast<std::size_t>(r)];
    users.push_back(userBuffersOf(collective, n, count, r, root, inPlace, sends[static_cast<std::size_t>(r)], size,
                                  layout.scratchElements));
    UserBuffers& u = users.back();
    ASSERT_EQ(callInPlace(collective, r, u.sendPointer, u.recvPointer, count, size), inPlace);
    PlanBuffers buffers = planBuffersOf(layout, u.sendPointer, u.recvPointer, size);
    buffers.scratch = u.scratch.data();
    calls.push_back(memberCallsOf(plans[static_cast<std::size_t>(r)], r, op, buffers));
  }
  // Group calls by (phase, index in phase): every member finds its own.
  std::map<std::pair<std::size_t, std::size_t>, std::map<int, const MemberCall*>> groups;
  for (int r = 0; r < n; ++r) {
    for (const MemberCall& call : calls[static_cast<std::size_t>(r)]) {
      const Phase& phase = plans[static_cast<std::size_t>(r)].phases[call.phase];
      const auto index = static_cast<std::size_t>(call.call - phase.calls.data());
      groups[{call.phase, index}][call.member] = &call;
      if (call.scope == Scope::InNode) {
        for (const int member : call.call->members) ASSERT_EQ(grid.nodeOf(member), grid.nodeOf(r));
      } else {
        for (const int member : call.call->members) ASSERT_EQ(grid.localOf(member), grid.localOf(r));
      }
    }
  }
  for (const auto& [key, members] : groups) {
    const int g = static_cast<int>(members.size());
    ASSERT_EQ(static_cast<std::size_t>(g), plans[0].phases[key.first].calls[key.second].members.size());
    const MemberCall& first = *members.begin()->second;
    std::vector<Bytes> groupSends;
    for (const auto& [m, call] : members) {
      const std::size_t elements = sendElementsOf(call->collective, g, call->count, m, call->root);
      const auto* from = static_cast<const std::byte*>(call->send);
      ASSERT_TRUE(elements == 0 || from != nullptr);
      groupSends.emplace_back(from, from + elements * size);
      ASSERT_EQ(call->count, first.count);
      ASSERT_EQ(call->root, first.root);
      ASSERT_EQ(call->op, first.op);
    }
    // An average finishes in one group across nodes, divided by every rank of the world (avgDivisor), not the
    // group's: summed here, then divided as the transport divides.
    const bool average = first.op == ReduceOp::Avg;
    std::vector<Bytes> results = hostReduceReference(first.collective, type, average ? ReduceOp::Sum : first.op, g,
                                                     first.count, first.root, groupSends);
    if (average) {
      ASSERT_EQ(first.avgDivisor, n);
      for (Bytes& result : results) {
        for (std::size_t i = 0; i < result.size() / size; ++i) {
          storeElement(type, result.data(), i, loadElement(type, result.data(), i) / first.avgDivisor);
        }
      }
    }
    for (const auto& [m, call] : members) {
      const Bytes& result = results[static_cast<std::size_t>(m)];
      if (result.empty()) continue;
      ASSERT_NE(call->recv, nullptr);
      std::memcpy(call->recv, result.data(), result.size());
    }
  }
  const std::vector<Bytes> want = hostReduceReference(collective, type, op, n, count, root, sends);
  for (int r = 0; r < n; ++r) {
    const Bytes& expected = want[static_cast<std::size_t>(r)];
    if (expected.empty()) continue;
    const UserBuffers& u = users[static_cast<std::size_t>(r)];
    const auto* at = static_cast<const std::byte*>(u.recvPointer);
    const Bytes got(at, at + expected.size());
    const Tolerance tol = op == ReduceOp::Avg ? tolerance(type, op, n) : Tolerance{};
    const auto mismatch = findMismatch(type, tol, expected, got);
    EXPECT_FALSE(mismatch.has_value()) << collectiveName(collective) << " on " << grid.nodes << " x "
                                       << grid.ranksPerNode << " count " << count << (inPlace ? " in place" : "")
                                       << ", rank " << r << ": " << *mismatch;
  }
}

TEST(NodeDecisions, EveryRanksGroupCallsMakeTheCollective) {
  for (Collective collective : {Collective::AllReduce, Collective::Broadcast, Collective::Reduce, Collective::AllGather,
                                Collective::ReduceScatter, Collective::AllToAll}) {
    for (const NodeGrid grid : {NodeGrid{2, 1}, NodeGrid{2, 2}, NodeGrid{3, 2}, NodeGrid{2, 4}}) {
      for (std::size_t count : {std::size_t{1}, std::size_t{5}, std::size_t{1000}, std::size_t{4099}}) {
        for (bool inPlace : {false, true}) {
          if (inPlace && collective == Collective::AllToAll) continue;
          simulate(collective, grid, count, DataType::I32, ReduceOp::Sum, inPlace);
          simulate(collective, grid, count, DataType::F32, ReduceOp::Max, inPlace);
          simulate(collective, grid, count, DataType::F16, ReduceOp::Avg, inPlace);
        }
      }
    }
  }
}

TEST(NodeDecisions, AverageDividesOnceByEveryRankAcrossNodes) {
  const NodeGrid grid{2, 2};
  const HierarchicalPlan plan = buildHierarchicalPlan(Collective::AllReduce, grid, 64, 0, false, 0, DataType::F32);
  std::vector<std::byte> send(256), recv(256), scratch(plan.plan.ranks[1].scratchElements * 4 + 4);
  PlanBuffers buffers = planBuffersOf(plan.plan.ranks[1], send.data(), recv.data(), 4);
  buffers.scratch = scratch.data();
  const std::vector<MemberCall> calls = memberCallsOf(plan, 1, ReduceOp::Avg, buffers);
  int across = 0;
  for (const MemberCall& call : calls) {
    if (call.scope == Scope::InNode) {
      EXPECT_EQ(call.op, ReduceOp::Sum) << describePhases(plan);  // the node's sum, not its average
      continue;
    }
    ++across;
    EXPECT_EQ(call.collective, Collective::AllReduce);
    EXPECT_EQ(call.op, ReduceOp::Avg);
    EXPECT_EQ(call.avgDivisor, 4);  // every rank, not the rail's 2
    EXPECT_EQ(call.call->members, (std::vector<int>{1, 3}));
  }
  EXPECT_EQ(across, 1) << describePhases(plan);
  EXPECT_EQ(calls.front().scope, Scope::InNode);
  EXPECT_EQ(calls.back().scope, Scope::InNode);
}

TEST(NodeDecisions, SendRecvPlansAreNotMemberCalls) {
  const HierarchicalPlan plan =
      buildHierarchicalPlan(Collective::SendRecv, NodeGrid{2, 2}, 8, 0, false, 0, DataType::F32);
  EXPECT_THROW(memberCallsOf(plan, 0, ReduceOp::Sum, {}), Error);
}

TEST(NodeDecisions, PeerCallsSplitByNodeInOneOrderOnEveryRank) {
  const NodeGrid grid{3, 2};  // ranks 0 1 | 2 3 | 4 5
  std::vector<std::byte> data(64);
  const auto call = [&](bool send, int peer) { return PeerCall{send, peer, data.data(), 4, 4, DataType::F32}; };
  // Rank 2: its node is {2, 3}.
  const PeerSplit split = splitPeerCalls(
      {call(true, 5), call(false, 3), call(true, 0), call(false, 5), call(true, 2), call(false, 1)}, grid, 2);
  ASSERT_EQ(split.inNode.size(), 2u);
  EXPECT_EQ(split.inNode[0].peer, 1);  // rank 3 is local index 1
  EXPECT_FALSE(split.inNode[0].send);
  EXPECT_EQ(split.inNode[1].peer, 0);  // itself
  ASSERT_EQ(split.acrossNodes.size(), 3u);
  // Pairs (0,2), (1,2), (2,5): ascending, as ranks 0, 1 and 5 order them too.
  EXPECT_EQ(split.acrossNodes[0].peer, 0);
  EXPECT_EQ(split.acrossNodes[1].peer, 1);
  EXPECT_EQ(split.acrossNodes[2].peer, 5);
  ASSERT_EQ(split.acrossNodes[2].calls.size(), 2u);  // in the order given
  EXPECT_TRUE(split.acrossNodes[2].calls[0].send);
  EXPECT_FALSE(split.acrossNodes[2].calls[1].send);
  // Rank 5 with rank 2 and rank 0: (0,5) before (2,5).
  const PeerSplit other = splitPeerCalls({call(false, 2), call(true, 0)}, grid, 5);
  ASSERT_EQ(other.acrossNodes.size(), 2u);
  EXPECT_EQ(other.acrossNodes[0].peer, 0);
  EXPECT_EQ(other.acrossNodes[1].peer, 2);
}

}  // namespace
}  // namespace peerlink::coll
