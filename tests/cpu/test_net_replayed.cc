// Calls across nodes captured into CUDA graphs (NetGroup::prepareReplayed / startReplay), as a communicator
// replays them, over a loopback world: the caller's side on a stand-in for a GPU stream, doing what a graph's start
// and its replayed kernels do (StandInStream::replayGraph). Calls prepared once and run many times, with
// new data each time, between eager async calls, on slot sets that change from run to run, against the closed
// forms; large collectives captured as several pieces; which calls can be captured; a run on a broken world ends at
// once, leaving the caller's buffers as they are; a graph's calls started between an eager call's ticket and its job
// fail, breaking the world, instead of crossing; a call that could not be started leaves no later call waiting. The
// stand-in stream plays the kernels' waits and copies, not their deadlines or how the two kernels of a piece hand its
// ticket on: the e2e across nodes runs those on the GPU (tests/mpi/comm_nodes_captured.cc).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "coll/choice_rules.hpp"
#include "coll/host_reduce.hpp"
#include "net/net_world.hpp"
#include "net_loopback_support.hpp"
#include "net_stand_in_stream.hpp"
#include "net_test_data.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

using coll::Bytes;
using stand_ins::hostWorld;
using stand_ins::optionsWith;
using stand_ins::queueAsync;
using stand_ins::StandInStream;
using testing::everySend;
using testing::onEveryRank;

// Rank r's input of a call's run `round`: the closed-form data, shifted per round so that every run differs.
std::vector<Bytes> roundSends(Collective collective, DataType type, int n, std::size_t count, int root, int round) {
  std::vector<Bytes> sends = everySend(collective, type, n, count, root);
  for (Bytes& bytes : sends) {
    for (std::size_t i = 0; i < bytes.size() / dataTypeSize(type); ++i) {
      coll::storeElement(type, bytes.data(), i, coll::loadElement(type, bytes.data(), i) + round);
    }
  }
  return sends;
}

struct Case {
  Collective collective;
  std::size_t count;
};

// Rank r's buffers for `cases` (fixed, as a graph's are) and the calls captured on them: each case in its pieces, in
// order.
struct CapturedCases {
  std::vector<Bytes> send, recv;
  std::vector<std::vector<ReplayedCall>> calls;  ///< each case's pieces
  std::vector<const std::vector<ReplayedCall>*> graph() const {
    std::vector<const std::vector<ReplayedCall>*> all;
    for (const std::vector<ReplayedCall>& pieces : calls) all.push_back(&pieces);
    return all;
  }
};

CapturedCases captureCases(NetGroup& group, const std::vector<Case>& cases, int n, int r, int root, DataType type,
                           ReduceOp op) {
  CapturedCases captured;
  captured.send.resize(cases.size());
  captured.recv.resize(cases.size());
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    Bytes& send = captured.send[k];
    Bytes& recv = captured.recv[k];
    send.assign(sendElementsOf(c.collective, n, c.count, r, root) * dataTypeSize(type), std::byte{0});
    recv.assign(recvElementsOf(c.collective, n, c.count, r, root) * dataTypeSize(type), std::byte{0x5a});
    captured.calls.push_back(group.prepareReplayed(
        {c.collective, c.count, type, op, 0, root, send.data(), recv.empty() ? nullptr : recv.data()}));
  }
  return captured;
}

// One run of `graph` on `stream`: `inputs` written into the captured send buffers (the receive buffers poisoned), the
// graph's calls run, then each receive buffer copied to got[k][rank]. Every buffer outlives the stream's work.
void queueGraphRun(StandInStream& stream, NetGroup& group, const std::vector<const std::vector<ReplayedCall>*>& graph,
                   const std::vector<Bytes>& inputs, std::vector<Bytes>& send, std::vector<Bytes>& recv,
                   std::vector<std::vector<Bytes>>& got, std::size_t rank) {
  stream.queue([&inputs, &send, &recv] {
    for (std::size_t k = 0; k < send.size(); ++k) {
      std::copy(inputs[k].begin(), inputs[k].end(), send[k].begin());
      std::fill(recv[k].begin(), recv[k].end(), std::byte{0x5a});  // (a reduce's other ranks have none)
    }
    return true;
  });
  stream.replayGraph(group, graph);
  stream.queue([&recv, &got, rank] {
    for (std::size_t k = 0; k < recv.size(); ++k) got[k][rank] = recv[k];
    return true;
  });
}

// Every round of `captured`'s graph (one per got[round]) on `stream`, then the stream drained: the round's closed-form
// inputs of rank `rank` written in, the graph run, its results into got[round][case][rank].
void runRounds(StandInStream& stream, NetGroup& group, CapturedCases& captured, const std::vector<Case>& cases,
               DataType type, int n, int root, std::vector<std::vector<std::vector<Bytes>>>& got, std::size_t rank) {
  std::vector<std::vector<Bytes>> inputs(got.size());
  for (std::size_t round = 0; round < got.size(); ++round) {
    for (const Case& c : cases) {
      inputs[round].push_back(roundSends(c.collective, type, n, c.count, root, static_cast<int>(round))[rank]);
    }
  }
  for (std::size_t round = 0; round < got.size(); ++round) {
    queueGraphRun(stream, group, captured.graph(), inputs[round], captured.send, captured.recv, got[round], rank);
  }
  stream.drain();
}

// Four collectives on 3 ranks captured once each into one graph (an all-reduce, an all-gather, a broadcast whose root
// only sends, a reduce whose other ranks only send), the graph run 7 times. Each round, on each rank's stream: the
// round's input written into the captured buffers, the graph run, its results copied aside, then an eager async
// all-reduce (5 calls a round: the calls' slot sets differ from round to round); every round's results against the
// closed forms.
TEST(NetReplayed, CapturedCallsRightEveryTimeTheirGraphRunsBetweenEagerCalls) {
  const int n = 3;
  const int root = 1;
  const int rounds = 7;
  const DataType type = DataType::F32;
  const ReduceOp op = ReduceOp::Sum;
  const std::vector<Case> cases = {{Collective::AllReduce, 37},
                                   {Collective::AllGather, 300},
                                   {Collective::Broadcast, 300},
                                   {Collective::Reduce, 37}};
  // got[round][case][rank]
  std::vector<std::vector<std::vector<Bytes>>> got(
      rounds, std::vector<std::vector<Bytes>>(cases.size() + 1, std::vector<Bytes>(n)));
  std::vector<int> stuck(n, 0);
  std::vector<std::string> broken(n);
  const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = hostWorld(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)));
    auto group = world->group({0, 1, 2}, "three");
    const auto i = static_cast<std::size_t>(r);
    StandInStream stream;
    CapturedCases captured = captureCases(*group, cases, n, r, root, type, op);
    for (std::size_t k = 0; k < cases.size(); ++k) {
      ASSERT_EQ(captured.calls[k].size(), 1u) << collectiveName(cases[k].collective);
    }
    const std::vector<const std::vector<ReplayedCall>*> graph = captured.graph();
    std::vector<Bytes>& send = captured.send;
    std::vector<Bytes>& recv = captured.recv;
    const std::size_t eager = cases.size();
    std::vector<std::vector<Bytes>> inputs(rounds);  // [round][case], the eager call's last
    for (int round = 0; round < rounds; ++round) {
      for (const Case& c : cases) inputs[round].push_back(roundSends(c.collective, type, n, c.count, root, round)[i]);
      inputs[round].push_back(roundSends(Collective::AllReduce, type, n, 37, root, 100 + round)[i]);
      got[round][eager][i].assign(37 * dataTypeSize(type), std::byte{0});
    }
    for (int round = 0; round < rounds; ++round) {
      queueGraphRun(stream, *group, graph, inputs[round], send, recv, got[round], i);
      // An eager call after the graph, numbered when it is made: once the stream is idle, as a communicator makes
      // sure where graphs may run.
      stream.drain();
      queueAsync(
          *group, stream,
          {Collective::AllReduce, 37, type, op, 0, root, inputs[round][eager].data(), got[round][eager][i].data()});
    }
    stream.drain();
    stuck[i] = stream.stuck();
    broken[i] = world->brokenBy();
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
    EXPECT_EQ(stuck[static_cast<std::size_t>(r)], 0) << "rank " << r;
    EXPECT_EQ(broken[static_cast<std::size_t>(r)], "") << "rank " << r;
  }
  int checked = 0;
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t k = 0; k <= cases.size(); ++k) {
      const bool eager = k == cases.size();
      const Collective collective = eager ? Collective::AllReduce : cases[k].collective;
      const std::size_t count = eager ? 37 : cases[k].count;
      const std::vector<Bytes> want =
          coll::hostReduceReference(collective, type, op, n, count, root,
                                    roundSends(collective, type, n, count, root, eager ? 100 + round : round));
      const coll::Tolerance tol = reduces(collective) ? coll::tolerance(type, op, n, 8.0) : coll::Tolerance{};
      for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
        if (want[r].empty()) continue;  // reduce off the root
        const auto mismatch = coll::findMismatch(type, tol, want[r], got[static_cast<std::size_t>(round)][k][r]);
        EXPECT_FALSE(mismatch) << (eager ? "eager all-reduce" : collectiveName(collective)) << " round " << round
                               << " rank " << r << ": " << *mismatch;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, rounds * (3 * 4 + 1));  // the reduce's root only
}

// A send/recv ring shift captured once, run 6 times with new data: every byte checked each time; of 1000 bytes (one
// async call) and of 5,000,000 (over a slot: several pieces, cut alike on every rank).
TEST(NetReplayed, CapturedSendRecvGroupRightEveryTimeItRuns) {
  const int n = 3;
  const int rounds = 6;
  for (const std::size_t count : {std::size_t{1000}, std::size_t{5000000}}) {
    const auto byteOf = [](int from, int round, std::size_t i) {
      return static_cast<std::byte>((from * 31 + round * 7 + static_cast<int>(i % 251)) & 0xff);
    };
    std::vector<std::string> wrong(n);
    std::vector<std::size_t> pieces(n, 0);
    const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
      auto world = hostWorld(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)));
      auto group = world->group({0, 1, 2}, "three");
      const int next = (r + 1) % n;
      const int previous = (r + n - 1) % n;
      Bytes toNext(count), fromPrevious(count);
      std::vector<ReplayedCall> captured = group->prepareReplayed(
          std::vector<PeerOp>{{true, next, toNext.data(), count}, {false, previous, fromPrevious.data(), count}},
          DataType::U8);
      pieces[static_cast<std::size_t>(r)] = captured.size();
      StandInStream stream;
      std::vector<Bytes> got(rounds);
      for (int round = 0; round < rounds; ++round) {
        stream.queue([&, round] {
          for (std::size_t i = 0; i < count; ++i) toNext[i] = byteOf(r, round, i);
          return true;
        });
        stream.replayGraph(*group, {&captured});
        stream.queue([&, round] {
          got[static_cast<std::size_t>(round)] = fromPrevious;
          return true;
        });
      }
      stream.drain();
      EXPECT_EQ(stream.stuck(), 0);
      for (int round = 0; round < rounds && wrong[static_cast<std::size_t>(r)].empty(); ++round) {
        for (std::size_t i = 0; i < count; ++i) {
          if (got[static_cast<std::size_t>(round)][i] != byteOf(previous, round, i)) {
            wrong[static_cast<std::size_t>(r)] = "round " + std::to_string(round) + " byte " + std::to_string(i);
            break;
          }
        }
      }
    });
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << count << " bytes, rank " << r;
      EXPECT_EQ(wrong[static_cast<std::size_t>(r)], "") << count << " bytes, rank " << r;
      // The transport's 4 MiB pieces halved until one fits a slot (1 MiB), so 5 pieces.
      EXPECT_EQ(pieces[static_cast<std::size_t>(r)], count == 1000 ? 1u : 5u) << count << " bytes, rank " << r;
    }
  }
}

// A collective, or a send/recv group, is captured as async calls of a piece each, the largest piece whose slots and
// copies fit: one where the whole call fits, more where it has several of the transport's pieces or a piece over a
// slot; none with PEERLINK_NET_ASYNC off.
TEST(NetReplayed, CollectivesAreCapturedAsAsyncCallsOfAPieceEach) {
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    NetOptions options = optionsWith(std::chrono::milliseconds(5000));
    options.chunkBytes = 4096;
    auto world = hostWorld(std::move(p2p), options);
    auto group = world->group({0, 1}, "two");
    if (r != 0) return;
    std::byte any[8192];
    const auto pieces = [&](std::size_t count) {
      return group->prepareReplayed({Collective::AllReduce, count, DataType::F32, ReduceOp::Sum, 0, 0, any, any})
          .size();
    };
    EXPECT_EQ(pieces(1024), 1u);  // one piece of 4 KiB
    EXPECT_EQ(pieces(1025), 2u);  // the transport's two pieces
    EXPECT_EQ(pieces(0), 0u);
    EXPECT_EQ(group->prepareReplayed(std::vector<PeerOp>{{true, 1, any, 4096}}, DataType::U8).size(), 1u);
    EXPECT_EQ(group->prepareReplayed(std::vector<PeerOp>{{true, 1, any, 4097}}, DataType::U8).size(), 2u);
  });
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  // One of the transport's pieces, but more than a slot holds (kAsyncSlotBytes, 1 MiB): an all-gather's output of
  // 2 x 768 KiB is captured as pieces of half, 2 x 384 KiB.
  const auto large = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    NetOptions options = optionsWith(std::chrono::milliseconds(5000));
    options.chunkBytes = std::size_t{4} << 20;
    auto world = hostWorld(std::move(p2p), options);
    auto group = world->group({0, 1}, "two");
    std::vector<std::byte> any(std::size_t{4} << 20);
    if (r == 0) {
      const auto pieces = [&](std::size_t count) {
        return group
            ->prepareReplayed(
                {Collective::AllGather, count, DataType::F32, ReduceOp::Sum, 0, 0, any.data(), any.data()})
            .size();
      };
      EXPECT_EQ(pieces(128 << 10), 1u);  // 2 x 512 KiB
      EXPECT_EQ(pieces(192 << 10), 2u);  // 2 x 768 KiB
    }
  });
  for (const std::string& error : large) EXPECT_EQ(error, "");
  const auto off = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    NetOptions options = optionsWith(std::chrono::milliseconds(5000));
    options.asyncCalls = false;
    auto world = hostWorld(std::move(p2p), options);
    auto group = world->group({0, 1}, "two");
    std::byte any[64];
    if (r == 0) {
      EXPECT_TRUE(
          group->prepareReplayed({Collective::AllReduce, 16, DataType::F32, ReduceOp::Sum, 0, 0, any, any}).empty());
    }
  });
  for (const std::string& error : off) EXPECT_EQ(error, "");
}

// Every collective too large for one async call (3 ranks, f32 sum, counts whose slots pass 1 MiB), captured as
// several pieces into one graph, the graph run 3 times with new data: every result against the closed form.
TEST(NetReplayed, LargeCollectivesCapturedInPiecesRightEveryTimeTheGraphRuns) {
  const int n = 3;
  const int root = 2;
  const int rounds = 3;
  const DataType type = DataType::F32;
  const ReduceOp op = ReduceOp::Sum;
  // The last of more pieces than slot sets: its later pieces wait for its own earlier ones' sets.
  const std::vector<Case> cases = {{Collective::AllReduce, 400003}, {Collective::ReduceScatter, 120011},
                                   {Collective::AllGather, 120011}, {Collective::Broadcast, 360001},
                                   {Collective::Reduce, 360001},    {Collective::AllToAll, 100013},
                                   {Collective::AllReduce, 2500003}};
  std::vector<std::vector<std::vector<Bytes>>> got(
      rounds, std::vector<std::vector<Bytes>>(cases.size(), std::vector<Bytes>(n)));
  std::vector<std::size_t> pieces(cases.size(), 0);
  std::vector<int> stuck(n, 0);
  const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = hostWorld(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)));
    auto group = world->group({0, 1, 2}, "three");
    const auto i = static_cast<std::size_t>(r);
    StandInStream stream;
    CapturedCases captured = captureCases(*group, cases, n, r, root, type, op);
    if (r == 0) {
      for (std::size_t k = 0; k < cases.size(); ++k) pieces[k] = captured.calls[k].size();
    }
    runRounds(stream, *group, captured, cases, type, n, root, got, i);
    stuck[i] = stream.stuck();
    EXPECT_EQ(world->brokenBy(), "");
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
    EXPECT_EQ(stuck[static_cast<std::size_t>(r)], 0) << "rank " << r;
  }
  for (std::size_t k = 0; k < cases.size(); ++k) {
    EXPECT_GT(pieces[k], k + 1 < cases.size() ? 1u : 2 * kAsyncSets) << collectiveName(cases[k].collective);
    for (int round = 0; round < rounds; ++round) {
      const Case& c = cases[k];
      const std::vector<Bytes> want = coll::hostReduceReference(
          c.collective, type, op, n, c.count, root, roundSends(c.collective, type, n, c.count, root, round));
      const coll::Tolerance tol = reduces(c.collective) ? coll::tolerance(type, op, n, 8.0) : coll::Tolerance{};
      for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
        if (want[r].empty()) continue;  // reduce off the root
        const auto mismatch = coll::findMismatch(type, tol, want[r], got[static_cast<std::size_t>(round)][k][r]);
        EXPECT_FALSE(mismatch) << collectiveName(c.collective) << " round " << round << " rank " << r << ": "
                               << *mismatch;
      }
    }
  }
}

// Where the staged path's reductions are the device's, a captured all-reduce of 2 ranks and a reduce-scatter of any
// number run one shot, their reductions the pieces' copies out (the stand-in stream's, as the replayed kernel's): the
// transport's plans move data only, and the results, of one piece and of many, f32 sums and bf16 averages, are right
// every time the graph runs, an all-reduce's the same bits on every rank. An all-reduce of 3 ranks stays a ring.
TEST(NetReplayed, CapturedReductionsOfTwoRanksAndReduceScattersAreTheCopiesOuts) {
  const int rounds = 3;
  struct Group {
    int n;
    DataType type;
    ReduceOp op;
    std::vector<Case> cases;
    std::vector<bool> deferred;  ///< per case: whether its pieces' copies out reduce
  };
  const std::vector<Group> groups = {
      {2,
       DataType::F32,
       ReduceOp::Sum,
       {{Collective::AllReduce, 37},
        {Collective::AllReduce, 2500003},
        {Collective::ReduceScatter, 300007},
        {Collective::AllGather, 1000}},
       {true, true, true, false}},
      {2, DataType::BF16, ReduceOp::Avg, {{Collective::AllReduce, 1000001}}, {true}},
      {3,
       DataType::F32,
       ReduceOp::Sum,
       {{Collective::ReduceScatter, 37}, {Collective::ReduceScatter, 200003}, {Collective::AllReduce, 1001}},
       {true, true, false}},
  };
  for (const Group& g : groups) {
    const int n = g.n;
    std::vector<std::vector<std::vector<Bytes>>> got(
        rounds, std::vector<std::vector<Bytes>>(g.cases.size(), std::vector<Bytes>(static_cast<std::size_t>(n))));
    struct Shape {
      std::size_t pieces = 0, reducing = 0, planReductions = 0;
    };
    std::vector<Shape> shapes(g.cases.size());
    std::vector<int> stuck(static_cast<std::size_t>(n), 0);
    std::vector<int> members(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) members[static_cast<std::size_t>(r)] = r;
    const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
      auto world = std::make_unique<NetWorld>(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)),
                                              std::make_unique<stand_ins::DeviceWithStagedMemory>(),
                                              std::make_unique<HostMemory>());
      auto group = world->group(members, "group");
      const auto i = static_cast<std::size_t>(r);
      StandInStream stream;
      CapturedCases captured = captureCases(*group, g.cases, n, r, 0, g.type, g.op);
      if (r == 1) {
        for (std::size_t k = 0; k < g.cases.size(); ++k) {
          // What each piece's copy out makes, and whether the transport's plan reduces anything.
          Shape& shape = shapes[k];
          shape.pieces = captured.calls[k].size();
          for (const ReplayedCall& piece : captured.calls[k]) {
            shape.reducing += piece.reductionsOut[0].empty() ? 0 : 1;
            for (const coll::Step& step : piece.piece.plan.steps) {
              for (const coll::Transfer& t : step.transfers) {
                shape.planReductions += t.kind == coll::TransferKind::Reduce ? 1 : 0;
              }
            }
          }
        }
      }
      runRounds(stream, *group, captured, g.cases, g.type, n, 0, got, i);
      stuck[i] = stream.stuck();
      EXPECT_EQ(world->brokenBy(), "");
    });
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
      EXPECT_EQ(stuck[static_cast<std::size_t>(r)], 0) << "rank " << r;
    }
    for (std::size_t k = 0; k < g.cases.size(); ++k) {
      const Case& c = g.cases[k];
      const std::string name = std::string(collectiveName(c.collective)) + " of " + std::to_string(c.count) + " on " +
                               std::to_string(n) + " ranks";
      const Shape& shape = shapes[k];
      EXPECT_GT(shape.pieces, 0u) << name;
      EXPECT_EQ(shape.reducing, g.deferred[k] ? shape.pieces : 0) << name << ": pieces reducing as they copy out";
      if (g.deferred[k]) {
        EXPECT_EQ(shape.planReductions, 0u) << name << ": reductions left in the transport's plans";
      } else if (c.collective == Collective::AllReduce) {
        EXPECT_GT(shape.planReductions, 0u) << name;
      }
      for (int round = 0; round < rounds; ++round) {
        const std::vector<Bytes> want = coll::hostReduceReference(
            c.collective, g.type, g.op, n, c.count, 0, roundSends(c.collective, g.type, n, c.count, 0, round));
        const coll::Tolerance tol = coll::tolerance(g.type, g.op, n, 8.0);
        const auto& results = got[static_cast<std::size_t>(round)][k];
        for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
          const auto mismatch = coll::findMismatch(g.type, tol, want[r], results[r]);
          EXPECT_FALSE(mismatch) << name << " round " << round << " rank " << r << ": " << *mismatch;
          if (c.collective == Collective::AllReduce) {
            EXPECT_EQ(results[r], results[0]) << name << " round " << round << ": rank " << r << "'s bits";
          }
        }
      }
    }
  }
}

// On a broken world (rank 0's eager call failed: rank 1 was lost), captured calls' runs still take their tickets and
// end at once, their jobs skipped and tickets released with the calls failed -- every piece of a call of several
// (replayed alone first, so that no later call's release or failure covers its pieces), and a broadcast's root,
// whose copies out only copy back what it copied in (a call failed before its copies in makes neither): the stream
// goes on, and the caller's buffers are left as they were.
TEST(NetReplayed, RunsOnABrokenWorldEndAtOnceLeavingTheBuffers) {
  std::string outcome;
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = hostWorld(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)));
    auto group = world->group({0, 1}, "two");
    if (r != 0) return;
    float send[4] = {1, 2, 3, 4};
    float recv[4] = {-1, -1, -1, -1};
    std::vector<ReplayedCall> pieces =
        group->prepareReplayed({Collective::AllReduce, 4, DataType::F32, ReduceOp::Sum, 0, 0, send, recv});
    ASSERT_EQ(pieces.size(), 1u);
    const std::size_t count = 600000;  // 2.4 MB: 4 pieces
    std::vector<float> largeSend(count, 1.0F), largeRecv(count, -1.0F);
    std::vector<ReplayedCall> large = group->prepareReplayed(
        {Collective::AllReduce, count, DataType::F32, ReduceOp::Sum, 0, 0, largeSend.data(), largeRecv.data()});
    ASSERT_EQ(large.size(), 4u);
    std::vector<float> rootSend(count, 1.0F), rootRecv(count, -1.0F);
    std::vector<ReplayedCall> broadcast = group->prepareReplayed(
        {Collective::Broadcast, count, DataType::F32, ReduceOp::Sum, 0, 0, rootSend.data(), rootRecv.data()});
    ASSERT_FALSE(broadcast.empty());
    ASSERT_FALSE(broadcast.front().awaitsRelease);
    world->peerLost(1, "a test lost it");
    EXPECT_THROW(group->allReduce(send, recv, 4, DataType::F32, ReduceOp::Sum), Error);
    recv[0] = recv[3] = -1;
    StandInStream stream;
    const auto start = std::chrono::steady_clock::now();
    stream.replayGraph(*group, {&large});
    stream.replayGraph(*group, {&large});
    stream.drain();
    stream.replayGraph(*group, {&broadcast});
    stream.drain();
    stream.replayGraph(*group, {&pieces});
    stream.replayGraph(*group, {&pieces});
    stream.drain();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto left = [](const std::vector<float>& v) {
      return std::all_of(v.begin(), v.end(), [](float x) { return x == -1.0F; });
    };
    const bool untouched = recv[0] == -1 && recv[3] == -1 && left(largeRecv) && left(rootRecv);
    outcome = std::string(stream.stuck() == 0 ? "ran through" : "stuck") +
              (untouched ? ", buffers left" : ", buffers written") + (seconds < 2 ? ", at once" : ", late") +
              (pieces.front().flags->failedFrom.value.load() != 0 ? ", failed" : ", not failed");
  });
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  EXPECT_EQ(outcome, "ran through, buffers left, at once, failed");
}

// A graph's call that could not be started (here: started without the numbering lock; in use, out of memory) took
// its tickets but handed no job on, so nothing releases them: the world breaks, and an eager call that would wait
// for those tickets' slot sets fails at once saying so, instead of waiting forever.
TEST(NetReplayed, ACallThatCouldNotBeStartedBreaksTheWorldAndLaterCallsFailAtOnce) {
  std::string outcome;
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = hostWorld(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)));
    auto group = world->group({0, 1}, "two");
    if (r != 0) return;
    const std::size_t count = 600000;  // 4 pieces: every slot set's next release is one of theirs
    std::vector<float> send(count, 1.0F), recv(count, 0.0F);
    std::vector<ReplayedCall> pieces = group->prepareReplayed(
        {Collective::AllReduce, count, DataType::F32, ReduceOp::Sum, 0, 0, send.data(), recv.data()});
    ASSERT_EQ(pieces.size(), 4u);
    const std::unique_lock<std::mutex> notHeld;
    group->startReplay(pieces, notHeld);
    float small[4] = {1, 2, 3, 4};
    auto done = std::make_shared<std::atomic<int>>(0);  // 1: threw, 2: prepared
    std::thread eager([&group, &small, done] {
      try {
        group->prepareAsync({Collective::AllReduce, 4, DataType::F32, ReduceOp::Sum, 0, 0, small, small});
        done->store(2);
      } catch (const Error&) {
        done->store(1);
      }
    });
    const auto start = std::chrono::steady_clock::now();
    while (done->load() == 0 && std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
      std::this_thread::yield();
    }
    if (done->load() == 0) {
      ADD_FAILURE() << "the eager call still waits for slot sets that nothing releases";
      std::fflush(nullptr);
      std::_Exit(1);  // (the thread cannot be stopped)
    }
    eager.join();
    outcome = std::string(done->load() == 1 ? "eager call failed" : "eager call prepared") +
              (world->brokenBy().find("could not be started") != std::string::npos ? ", world broken saying why"
                                                                                   : ", world: " + world->brokenBy());
  });
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  EXPECT_EQ(outcome, "eager call failed, world broken saying why");
}

// Calls that return once queued add the transport's time on them as they end (NetWorld::queuedCallTime, what
// `peerlink coll` reports across nodes): three eager async all-reduces and a captured one of 4 pieces run twice
// count 5 calls on every rank, a call of several pieces once; a reset clears the count.
TEST(NetReplayed, CallsThatReturnOnceQueuedAddTheirTimeAsTheyEnd) {
  std::vector<std::pair<std::uint64_t, double>> seen(2), afterReset(2);
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = hostWorld(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)));
    auto group = world->group({0, 1}, "two");
    std::vector<float> small(64, 1.0F), smallOut(64, 0.0F);
    const std::size_t count = 600000;
    std::vector<float> send(count, 1.0F), recv(count, 0.0F);
    std::vector<ReplayedCall> pieces = group->prepareReplayed(
        {Collective::AllReduce, count, DataType::F32, ReduceOp::Sum, 0, 0, send.data(), recv.data()});
    ASSERT_EQ(pieces.size(), 4u);
    StandInStream stream;
    for (int k = 0; k < 3; ++k) {
      queueAsync(
          *group, stream,
          {Collective::AllReduce, small.size(), DataType::F32, ReduceOp::Sum, 0, 0, small.data(), smallOut.data()});
    }
    stream.replayGraph(*group, {&pieces});
    stream.replayGraph(*group, {&pieces});
    stream.drain();
    EXPECT_EQ(stream.stuck(), 0);
    seen[static_cast<std::size_t>(r)] = world->queuedCallTime();
    world->resetQueuedCallTime();
    afterReset[static_cast<std::size_t>(r)] = world->queuedCallTime();
  });
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(errors[r], "") << "rank " << r;
    EXPECT_EQ(seen[r].first, 5u) << "rank " << r;
    EXPECT_GT(seen[r].second, 0.0) << "rank " << r;
    EXPECT_EQ(afterReset[r].first, 0u) << "rank " << r;
    EXPECT_EQ(afterReset[r].second, 0.0) << "rank " << r;
  }
}

// A graph's start that runs while the caller's thread is between taking an eager call's ticket and handing it on (a
// graph launched on a stream not ordered with the eager call's): the jobs would reach the progress thread out of
// ticket order, so the world breaks saying why, and every call from the eager one on is marked failed -- neither
// kernel copies the other's results out.
TEST(NetReplayed, CallsStartedOutOfOrderFailInsteadOfTakingEachOthersResults) {
  std::string outcome;
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = hostWorld(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)));
    auto group = world->group({0, 1}, "two");
    if (r != 0) return;
    float send[4] = {1, 2, 3, 4};
    float recv[4] = {};
    const NetCall call{Collective::AllReduce, 4, DataType::F32, ReduceOp::Sum, 0, 0, send, recv};
    std::vector<ReplayedCall> pieces = group->prepareReplayed(call);
    ASSERT_EQ(pieces.size(), 1u);
    AsyncCall eager = group->prepareAsync(call);
    const std::uint64_t eagerTicket = eager.ticket;
    std::uint64_t replayTicket = 0;
    {
      const std::unique_lock<std::mutex> numbering = world->lockNumbering();
      replayTicket = group->startReplay(pieces, numbering);
    }
    group->startAsync(std::move(eager));
    const AsyncFlags& flags = *pieces.front().flags;
    const auto start = std::chrono::steady_clock::now();
    while (flags.release.value.load() < replayTicket &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
      std::this_thread::yield();
    }
    const std::string broken = world->brokenBy();
    outcome =
        std::string(replayTicket == eagerTicket + 1 ? "tickets in turn" : "tickets out of turn") +
        (flags.release.value.load() >= replayTicket ? ", released" : ", not released") +
        (flags.failedFrom.value.load() == eagerTicket ? ", failed from the eager call" : ", failed elsewhere") +
        (broken.find("started out of order") != std::string::npos ? ", world broken saying why" : ", world: " + broken);
  });
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  EXPECT_EQ(outcome, "tickets in turn, released, failed from the eager call, world broken saying why");
}

}  // namespace
}  // namespace peerlink::net
