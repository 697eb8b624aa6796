// Async calls of the transport (NetGroup::prepareAsync / startAsync) as a communicator makes them, over a loopback
// world: the caller's side on a stand-in for a GPU stream (operations in order on a thread of their own, doing what
// the async call's kernel does: copies in, the copied-in flag, a wait on the release flag, copies out and, where the
// call's messages only move data, its reductions). Every collective against the closed forms with several calls in
// flight and slot sets reused, where the host reduces and where the copies out do, and send/recv groups; which
// calls fit; a call whose copies in never end releases the stream anyway, at the deadline, and breaks the world (its
// results left out); an abandoned call and the calls behind it end at once; the fifth call waits for the first to end
// before it takes its slots; a call whose messages only leave ends without waiting for them, one without copies in
// runs its messages before its stream gets there, but not into slots a kernel still copies out of, and breaks the
// world where its kernel could not be queued. (Queued calls: test_net_queued_calls.cc.)
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
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

// Every collective, out of place and (all-reduce) in place, f32 sum, f16 avg and i32 max, counts 1, 37 and 300: on
// each rank, every call of a collective queued back to back on its stream (more calls than slot sets, so sets are
// reused while earlier calls' copies out are still queued), then each result against the closed form. On 3 ranks of
// a world that reduces on the host; and where the staged path's reductions are the device's, on 2 ranks (all-reduces
// and reduce-scatters one shot, their copies out reducing) and on 3 (reduce-scatters so).
TEST(NetAsync, EveryCollectiveRightWithCallsInFlight) {
  const int root = 1;
  struct World {
    int n;
    bool onDevice;
  };
  for (const World w : {World{3, false}, World{2, true}, World{3, true}}) {
    const int n = w.n;
    int calls = 0;
    for (const Collective collective : {Collective::AllReduce, Collective::ReduceScatter, Collective::Reduce,
                                        Collective::AllGather, Collective::Broadcast, Collective::AllToAll}) {
      const std::string where = std::string(collectiveName(collective)) + " on " + std::to_string(n) + " ranks" +
                                (w.onDevice ? " reducing on the device" : "");
      struct Case {
        std::size_t count;
        DataType type;
        ReduceOp op;
        bool inPlace;
      };
      std::vector<Case> cases;
      for (const std::size_t count : {std::size_t{1}, std::size_t{37}, std::size_t{300}}) {
        for (const auto& [type, op] : {std::pair{DataType::F32, ReduceOp::Sum}, std::pair{DataType::F16, ReduceOp::Avg},
                                       std::pair{DataType::I32, ReduceOp::Max}}) {
          cases.push_back({count, type, op, false});
          if (collective == Collective::AllReduce) cases.push_back({count, type, op, true});
        }
      }
      std::vector<std::vector<Bytes>> sends;
      for (const Case& c : cases) sends.push_back(everySend(collective, c.type, n, c.count, root));
      std::vector<std::vector<Bytes>> got(cases.size(), std::vector<Bytes>(static_cast<std::size_t>(n)));
      std::vector<int> stuck(static_cast<std::size_t>(n), 0);
      std::vector<std::size_t> reducingCopiesOut(static_cast<std::size_t>(n), 0);
      std::vector<int> members;
      for (int r = 0; r < n; ++r) members.push_back(r);
      const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
        std::unique_ptr<DeviceAccess> device =
            w.onDevice ? std::make_unique<stand_ins::DeviceWithStagedMemory>() : hostDeviceAccess();
        auto world = std::make_unique<NetWorld>(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)),
                                                std::move(device), std::make_unique<HostMemory>());
        auto group = world->group(members, "group");
        const auto i = static_cast<std::size_t>(r);
        StandInStream stream;
        std::vector<Bytes> send(cases.size());
        for (std::size_t k = 0; k < cases.size(); ++k) {
          const Case& c = cases[k];
          send[k] = sends[k][i];
          Bytes& recv = got[k][i];
          recv.assign(recvElementsOf(collective, n, c.count, r, root) * dataTypeSize(c.type), std::byte{0x5a});
          if (c.inPlace) recv = send[k];
          const NetCall call{collective, c.count, c.type, c.op, 0, root, c.inPlace ? recv.data() : send[k].data(),
                             recv.data()};
          ASSERT_TRUE(group->asyncFits(call));
          AsyncCall async = group->prepareAsync(call);
          reducingCopiesOut[i] += async.reductionsOut.empty() ? 0 : 1;
          stream.kernel(async);
          group->startAsync(std::move(async));
        }
        stream.drain();
        stuck[i] = stream.stuck();
        EXPECT_EQ(world->brokenBy(), "");
      });
      const bool deferred =
          w.onDevice && (collective == Collective::ReduceScatter || (collective == Collective::AllReduce && n == 2));
      for (int r = 0; r < n; ++r) {
        const auto i = static_cast<std::size_t>(r);
        EXPECT_EQ(errors[i], "") << where << " rank " << r;
        EXPECT_EQ(stuck[i], 0) << where << " rank " << r;
        EXPECT_EQ(reducingCopiesOut[i], deferred ? cases.size() : 0) << where << " rank " << r;
      }
      for (std::size_t k = 0; k < cases.size(); ++k) {
        const Case& c = cases[k];
        const std::vector<Bytes> want = coll::hostReduceReference(collective, c.type, c.op, n, c.count, root, sends[k]);
        const coll::Tolerance tol = reduces(collective) ? coll::tolerance(c.type, c.op, n, 8.0) : coll::Tolerance{};
        for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
          if (want[r].empty()) continue;  // reduce off the root
          const auto mismatch = coll::findMismatch(c.type, tol, want[r], got[k][r]);
          EXPECT_FALSE(mismatch) << where << " count " << c.count << ' ' << dataTypeName(c.type)
                                 << (c.inPlace ? " in place" : "") << " rank " << r << ": " << *mismatch;
        }
        ++calls;
      }
    }
    EXPECT_EQ(calls, 6 * 9 + 9);
  }
}

// Send/recv groups async on 3 ranks: each rank sends to the next and to itself and receives from the one before and
// from itself, counts 1 to 4000 bytes, six groups queued back to back (slot sets reused), every byte checked.
TEST(NetAsync, SendRecvGroupsRightWithCallsInFlight) {
  const int n = 3;
  const std::vector<std::size_t> counts = {1, 7, 64, 1000, 4000, 333};
  const auto byteOf = [](int from, int to, std::size_t k, std::size_t i) {
    return static_cast<std::byte>((from * 31 + to * 7 + static_cast<int>(k) * 5 + static_cast<int>(i)) & 0xff);
  };
  std::vector<std::string> wrong(n);
  const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = hostWorld(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)));
    auto group = world->group({0, 1, 2}, "three");
    const int next = (r + 1) % n;
    const int previous = (r + n - 1) % n;
    std::vector<Bytes> toNext(counts.size()), toSelf(counts.size()), fromPrevious(counts.size()),
        fromSelf(counts.size());
    StandInStream stream;
    for (std::size_t k = 0; k < counts.size(); ++k) {
      const std::size_t c = counts[k];
      toNext[k].resize(c);
      toSelf[k].resize(c);
      for (std::size_t i = 0; i < c; ++i) {
        toNext[k][i] = byteOf(r, next, k, i);
        toSelf[k][i] = byteOf(r, r, k, i);
      }
      fromPrevious[k].assign(c, std::byte{0x5a});
      fromSelf[k].assign(c, std::byte{0x5a});
      const std::vector<PeerOp> ops = {{true, next, toNext[k].data(), c},
                                       {true, r, toSelf[k].data(), c},
                                       {false, previous, fromPrevious[k].data(), c},
                                       {false, r, fromSelf[k].data(), c}};
      ASSERT_TRUE(group->asyncFits(ops, DataType::U8));
      AsyncCall async = group->prepareAsync(ops, DataType::U8);
      stream.kernel(async);
      group->startAsync(std::move(async));
    }
    stream.drain();
    EXPECT_EQ(stream.stuck(), 0);
    for (std::size_t k = 0; k < counts.size() && wrong[static_cast<std::size_t>(r)].empty(); ++k) {
      for (std::size_t i = 0; i < counts[k]; ++i) {
        if (fromPrevious[k][i] != byteOf(previous, r, k, i) || fromSelf[k][i] != byteOf(r, r, k, i)) {
          wrong[static_cast<std::size_t>(r)] = "group " + std::to_string(k) + " byte " + std::to_string(i);
          break;
        }
      }
    }
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
    EXPECT_EQ(wrong[static_cast<std::size_t>(r)], "") << "rank " << r;
  }
}

TEST(NetAsync, OnlySmallStagedCallsOfOnePieceFit) {
  std::vector<std::string> seen;
  const auto errors = onEveryRank(3, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    NetOptions options = optionsWith(std::chrono::milliseconds(5000));
    options.chunkBytes = 4096;
    auto world = hostWorld(std::move(p2p), options);
    auto group = world->group({0, 1, 2}, "three");
    if (r != 0) return;
    std::byte any[1];
    const auto fits = [&](Collective collective, std::size_t count) {
      return group->asyncFits({collective, count, DataType::F32, ReduceOp::Sum, 0, 0, any, any});
    };
    EXPECT_TRUE(fits(Collective::AllReduce, 1024));   // one piece of 4 KiB
    EXPECT_FALSE(fits(Collective::AllReduce, 1025));  // two pieces
    EXPECT_FALSE(fits(Collective::AllReduce, 0));     // nothing to move
    EXPECT_FALSE(fits(Collective::SendRecv, 16));     // send/recv groups: the ops' overload
    std::byte bytes[8192];
    EXPECT_TRUE(group->asyncFits(std::vector<PeerOp>{{true, 1, bytes, 4096}}, DataType::U8));
    EXPECT_FALSE(group->asyncFits(std::vector<PeerOp>{{true, 1, bytes, 4097}}, DataType::U8));  // two pieces
    EXPECT_FALSE(group->asyncFits(std::vector<PeerOp>{{true, 3, bytes, 16}}, DataType::U8));    // no rank 3
    EXPECT_FALSE(group->asyncFits(std::vector<PeerOp>{{false, 0, bytes, 16}}, DataType::U8));   // no send to self
    EXPECT_TRUE(fits(Collective::AllGather, 1024));                                             // output 12 KiB
    EXPECT_TRUE(fits(Collective::AllToAll, 1024));
  });
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  // A piece whose output passes kAsyncSlotBytes (1 MiB): an all-gather of 3 x 384 KiB with pieces of 512 KiB.
  const auto large = onEveryRank(3, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    NetOptions options = optionsWith(std::chrono::milliseconds(5000));
    options.chunkBytes = 512 << 10;
    auto world = hostWorld(std::move(p2p), options);
    auto group = world->group({0, 1, 2}, "three");
    std::byte any[1];
    if (r == 0) {
      EXPECT_FALSE(group->asyncFits({Collective::AllGather, 96 << 10, DataType::F32, ReduceOp::Sum, 0, 0, any, any}));
      EXPECT_TRUE(group->asyncFits({Collective::AllGather, 64 << 10, DataType::F32, ReduceOp::Sum, 0, 0, any, any}));
    }
  });
  for (const std::string& error : large) EXPECT_EQ(error, "");
  // Off by the setting, and on the direct path (MPI reads the caller's memory itself).
  for (const bool direct : {false, true}) {
    const auto off = onEveryRank(2, [&](int, std::unique_ptr<PointToPoint> p2p) {
      NetOptions options = optionsWith(std::chrono::milliseconds(5000));
      options.asyncCalls = direct;
      if (direct) options.path = NetPath::Direct;
      auto world = hostWorld(std::move(p2p), options);
      auto group = world->group({0, 1}, "two");
      std::byte any[4];
      EXPECT_FALSE(group->asyncFits({Collective::AllReduce, 1, DataType::F32, ReduceOp::Sum, 0, 0, any, any}));
    });
    for (const std::string& error : off) EXPECT_EQ(error, "");
  }
}

// Rank 0's copies in never end (its stream is stuck before the call): its job gives up at the deadline, says so,
// writes its ticket anyway, and the world is broken: the next call is refused naming why. Rank 1 names rank 0.
TEST(NetAsync, ACallWhoseCopiesNeverEndReleasesTheStreamAtTheDeadline) {
  const auto timeout = std::chrono::milliseconds(300);
  std::vector<std::string> broken(2), refused(2);
  std::vector<double> seconds(2, 0);
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = hostWorld(std::move(p2p), optionsWith(timeout));
    auto group = world->group({0, 1}, "two");
    float send[4] = {1, 2, 3, 4};
    float recv[4] = {};
    const NetCall call{Collective::AllReduce, 4, DataType::F32, ReduceOp::Sum, 0, 0, send, recv};
    AsyncCall async = group->prepareAsync(call);
    const std::uint64_t ticket = async.ticket;
    AsyncFlags* flags = async.flags;
    const std::atomic<std::uint64_t>* release = &flags->release.value;
    if (r != 0) flags->copiedIn[async.set].value.store(ticket);
    const auto start = std::chrono::steady_clock::now();
    group->startAsync(std::move(async));
    while (release->load() < ticket && std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
      std::this_thread::yield();
    }
    seconds[static_cast<std::size_t>(r)] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(flags->failedFrom.value.load(), ticket) << "rank " << r << ": the failed call's results must be left out";
    broken[static_cast<std::size_t>(r)] = world->brokenBy();
    try {
      group->prepareAsync(call);
    } catch (const Error& error) {
      refused[static_cast<std::size_t>(r)] = std::string(errorCodeName(error.code())) + ": " + error.what();
    }
  });
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  EXPECT_NE(broken[0].find("the caller's stream did not reach the call's copies into pinned host memory within 300 ms"),
            std::string::npos)
      << broken[0];
  EXPECT_NE(broken[1].find("rank 0"), std::string::npos) << broken[1];
  for (int r = 0; r < 2; ++r) {
    EXPECT_LT(seconds[static_cast<std::size_t>(r)], 2.0) << "rank " << r;  // within the deadline's bounds, not 10 s
    EXPECT_NE(refused[static_cast<std::size_t>(r)].find("RemoteError: net: an earlier call failed"), std::string::npos)
        << refused[static_cast<std::size_t>(r)];
  }
}

// Rank 0 could not queue its side of the first of two calls (a failed launch: abandoned): that job fails at once,
// breaking the world, and the second, queued behind it, ends at once too -- both tickets released long before the
// deadline, the first failed one recorded, the error saying why. Rank 1 names rank 0 at the deadline.
TEST(NetAsync, AnAbandonedCallFailsAtOnceAndSoDoThoseBehindIt) {
  const auto timeout = std::chrono::milliseconds(2000);
  std::vector<std::string> broken(2);
  double rank0Seconds = 0;
  std::uint64_t failedFrom = 0;
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = hostWorld(std::move(p2p), optionsWith(timeout));
    auto group = world->group({0, 1}, "two");
    float send[4] = {1, 2, 3, 4};
    float recv[4] = {};
    const NetCall call{Collective::AllReduce, 4, DataType::F32, ReduceOp::Sum, 0, 0, send, recv};
    // Both prepared before either starts: once the first failed, a third would be refused.
    std::vector<AsyncCall> calls;
    for (int k = 0; k < 2; ++k) calls.push_back(group->prepareAsync(call));
    AsyncFlags* flags = calls.back().flags;
    const std::uint64_t last = calls.back().ticket;
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t k = 0; k < calls.size(); ++k) {
      if (r == 0 && k == 0) calls[k].abandoned->store(true);
      if (r == 1) flags->copiedIn[calls[k].set].value.store(calls[k].ticket);
      group->startAsync(std::move(calls[k]));
    }
    while (flags->release.value.load() < last && std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
      std::this_thread::yield();
    }
    if (r == 0) {
      rank0Seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      failedFrom = flags->failedFrom.value.load();
    }
    broken[static_cast<std::size_t>(r)] = world->brokenBy();
  });
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  EXPECT_LT(rank0Seconds, 1.0);  // not the 2 s deadline
  EXPECT_EQ(failedFrom, 1u);
  EXPECT_NE(broken[0].find("the caller could not queue the call's kernel"), std::string::npos) << broken[0];
  EXPECT_NE(broken[1].find("rank 0"), std::string::npos) << broken[1];
}

// One rank: calls 1-4 take the four slot sets; call 5 reuses call 1's and must not get it before call 1 ended on the
// transport's thread (held there until its copies in are said done).
TEST(NetAsync, AReusedSlotSetWaitsForItsLastCall) {
  const auto errors = onEveryRank(1, [&](int, std::unique_ptr<PointToPoint> p2p) {
    auto world = hostWorld(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)));
    auto group = world->group({0}, "one");
    float send[2] = {1, 2};
    float recv[2] = {};
    const NetCall call{Collective::AllReduce, 2, DataType::F32, ReduceOp::Sum, 0, 0, send, recv};
    std::atomic<std::uint64_t>* firstCopied = nullptr;
    std::uint64_t firstTicket = 0;
    for (std::size_t k = 0; k < kAsyncSets; ++k) {
      AsyncCall async = group->prepareAsync(call);
      EXPECT_EQ(async.set, async.ticket % kAsyncSets);
      if (k == 0) {
        firstCopied = &async.flags->copiedIn[async.set].value;
        firstTicket = async.ticket;
      } else {
        async.flags->copiedIn[async.set].value.store(async.ticket);
      }
      group->startAsync(std::move(async));
    }
    std::atomic<bool> prepared{false};
    std::thread fifth([&] {
      AsyncCall async = group->prepareAsync(call);
      prepared = true;
      async.flags->copiedIn[async.set].value.store(async.ticket);
      group->startAsync(std::move(async));
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(prepared.load()) << "the fifth call took the first call's slots while it still ran";
    firstCopied->store(firstTicket);
    fifth.join();
    EXPECT_TRUE(prepared.load());
  });
  for (const std::string& error : errors) EXPECT_EQ(error, "");
}

// Waits up to `limit` for `done`; whether it came.
template <typename Done>
bool within(std::chrono::milliseconds limit, Done done) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::yield();
  }
  return true;
}

// A broadcast's root and a reduce's other rank only send: their kernels copy out what they copied in and end at
// once, while the peer has not even called yet (it calls only once the sender's stream ran through, or after 2 s).
// The receiving ranks await the release. Every result right.
TEST(NetAsync, ACallWhoseMessagesOnlyLeaveEndsWithoutWaitingForThem) {
  for (const Collective collective : {Collective::Broadcast, Collective::Reduce}) {
    const int root = 1;
    const std::size_t count = 37;
    const int sender = collective == Collective::Broadcast ? root : 1 - root;
    const std::vector<Bytes> sends = everySend(collective, DataType::F32, 2, count, root);
    std::vector<Bytes> got(2);
    std::vector<bool> awaits(2, true);
    std::atomic<bool> senderRanThrough{false}, senderDone{false};
    const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
      auto world = hostWorld(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)));
      auto group = world->group({0, 1}, "two");
      const auto i = static_cast<std::size_t>(r);
      if (r != sender) within(std::chrono::milliseconds(2000), [&] { return senderDone.load(); });
      Bytes send = sends[i];
      got[i].assign(recvElementsOf(collective, 2, count, r, root) * sizeof(float), std::byte{0x5a});
      const NetCall call{collective, count, DataType::F32, ReduceOp::Sum, 0, root, send.data(), got[i].data()};
      StandInStream stream;
      AsyncCall async = group->prepareAsync(call);
      awaits[i] = async.awaitsRelease;
      stream.kernel(async);
      group->startAsync(std::move(async));
      if (r == sender) {
        senderRanThrough = within(std::chrono::milliseconds(2000), [&] { return stream.reached(3); });
        senderDone = true;
      }
      stream.drain();
      EXPECT_EQ(stream.stuck(), 0) << "rank " << r;
      EXPECT_EQ(world->brokenBy(), "");
    });
    for (const std::string& error : errors) EXPECT_EQ(error, "") << collectiveName(collective);
    EXPECT_FALSE(awaits[static_cast<std::size_t>(sender)]) << collectiveName(collective);
    EXPECT_TRUE(awaits[static_cast<std::size_t>(1 - sender)]) << collectiveName(collective);
    EXPECT_TRUE(senderRanThrough.load()) << collectiveName(collective) << ": the sender's kernel waited for its peer";
    const std::vector<Bytes> want =
        coll::hostReduceReference(collective, DataType::F32, ReduceOp::Sum, 2, count, root, sends);
    for (std::size_t r = 0; r < 2; ++r) {
      if (want[r].empty()) continue;
      const auto mismatch = coll::findMismatch(DataType::F32, coll::Tolerance{}, want[r], got[r]);
      EXPECT_FALSE(mismatch) << collectiveName(collective) << " rank " << r << ": " << *mismatch;
    }
  }
}

// A broadcast's other rank copies nothing in: its messages run, and its release comes, while its stream is still
// held before the call; once let go, the kernel copies the result out.
TEST(NetAsync, ACallWithoutCopiesInRunsItsMessagesBeforeItsStreamGetsThere) {
  const std::size_t count = 100;
  const std::vector<Bytes> sends = everySend(Collective::Broadcast, DataType::I32, 2, count, 0);
  std::vector<Bytes> got(2);
  std::atomic<bool> releasedWhileHeld{false};
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = hostWorld(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)));
    auto group = world->group({0, 1}, "two");
    const auto i = static_cast<std::size_t>(r);
    Bytes send = sends[i];
    got[i].assign(count * sizeof(std::int32_t), std::byte{0x5a});
    const NetCall call{Collective::Broadcast, count, DataType::I32, ReduceOp::Sum, 0, 0, send.data(), got[i].data()};
    StandInStream stream;
    std::atomic<bool> held{r == 1};
    stream.queue([&held] { return !held.load(); });
    AsyncCall async = group->prepareAsync(call);
    const std::uint64_t ticket = async.ticket;
    const AsyncFlags* flags = async.flags;
    stream.kernel(async);
    group->startAsync(std::move(async));
    if (r == 1) {
      releasedWhileHeld =
          within(std::chrono::milliseconds(2000), [&] { return flags->release.value.load() >= ticket; });
      held = false;
    }
    stream.drain();
    EXPECT_EQ(stream.stuck(), 0) << "rank " << r;
  });
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  EXPECT_TRUE(releasedWhileHeld.load()) << "the receiving rank's messages waited for its stream";
  for (std::size_t r = 0; r < 2; ++r) EXPECT_EQ(got[r], sends[0]) << "rank " << r;
}

// Five broadcasts from rank 0, each its own data; rank 1's first kernel is held after its release, before its copies
// out, for 300 ms. The fifth call reuses the first's slots and copies nothing in: its messages must wait for the first
// kernel's copies out, or they would overwrite the first call's result before it is copied out.
TEST(NetAsync, ACallWithoutCopiesInWaitsForItsSlotsLastCopiesOut) {
  const std::size_t count = 64;
  const std::size_t calls = kAsyncSets + 1;
  std::vector<std::vector<Bytes>> sends;
  for (std::size_t k = 0; k < calls; ++k) {
    std::vector<Bytes> send = everySend(Collective::Broadcast, DataType::I32, 2, count, 0);
    for (std::byte& b : send[0]) b = static_cast<std::byte>(static_cast<int>(b) ^ static_cast<int>(k * 17 + 1));
    sends.push_back(send);
  }
  std::vector<std::vector<Bytes>> got(calls, std::vector<Bytes>(2));
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = hostWorld(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)));
    auto group = world->group({0, 1}, "two");
    const auto i = static_cast<std::size_t>(r);
    StandInStream stream;
    std::vector<Bytes> send(calls);
    const auto heldUntil = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    for (std::size_t k = 0; k < calls; ++k) {
      send[k] = sends[k][i];
      got[k][i].assign(count * sizeof(std::int32_t), std::byte{0x5a});
      const NetCall call{Collective::Broadcast, count,           DataType::I32, ReduceOp::Sum, 0, 0,
                         send[k].data(),        got[k][i].data()};
      AsyncCall async = group->prepareAsync(call);
      if (r == 1 && k == 0) {
        stream.kernel(async, [heldUntil] { return std::chrono::steady_clock::now() >= heldUntil; });
      } else {
        stream.kernel(async);
      }
      group->startAsync(std::move(async));
    }
    stream.drain();
    EXPECT_EQ(stream.stuck(), 0) << "rank " << r;
    EXPECT_EQ(world->brokenBy(), "");
  });
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  for (std::size_t k = 0; k < calls; ++k) {
    for (std::size_t r = 0; r < 2; ++r) EXPECT_EQ(got[k][r], sends[k][0]) << "call " << k << " rank " << r;
  }
}

// A broadcast's other rank copies nothing in, so its job may run its messages before the caller's stream gets there;
// where the caller then cannot queue the kernel (a failed launch), the world breaks at once whether or not the job
// already ran (a kernel the driver queued despite the error may still read the slots), and the next call is refused.
TEST(NetAsync, ACallWithoutCopiesInWhoseKernelCouldNotBeQueuedBreaksTheWorld) {
  const std::size_t count = 16;
  std::string broken, refused;
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = hostWorld(std::move(p2p), optionsWith(std::chrono::milliseconds(2000)));
    auto group = world->group({0, 1}, "two");
    std::vector<float> send(count, 1.0f), recv(count, 0.0f);
    const NetCall call{Collective::Broadcast, count, DataType::F32, ReduceOp::Sum, 0, 0, send.data(), recv.data()};
    AsyncCall async = group->prepareAsync(call);
    const std::shared_ptr<std::atomic<bool>> abandoned = async.abandoned;
    const std::uint64_t ticket = async.ticket;
    const AsyncFlags* flags = async.flags;
    StandInStream stream;
    if (r == 0) stream.kernel(async);
    group->startAsync(std::move(async));
    if (r == 0) {
      stream.drain();
      return;
    }
    within(std::chrono::milliseconds(2000), [&] { return flags->release.value.load() >= ticket; });
    group->abandonAsync(abandoned, "launch failed");
    broken = world->brokenBy();
    try {
      group->prepareAsync(call);
    } catch (const Error& error) {
      refused = std::string(errorCodeName(error.code())) + ": " + error.what();
    }
  });
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  EXPECT_NE(broken.find("the caller could not queue the call's kernel (launch failed)"), std::string::npos) << broken;
  EXPECT_NE(refused.find("RemoteError: net: an earlier call failed"), std::string::npos) << refused;
}

}  // namespace
}  // namespace peerlink::net
