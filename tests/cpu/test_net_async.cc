// Async calls of the transport (NetGroup::prepareAsync / startAsync) as a communicator makes them, over a loopback
// world: the caller's side on a stand-in for a GPU stream (operations in order on a thread of their own, doing what
// the async call's kernel does: copies in, the copied-in flag, a wait on the release flag, copies out). Every
// collective against the closed forms with several calls in flight and slot sets reused, and send/recv groups; which
// calls fit; a call whose copies in never end releases the stream anyway, at the deadline, and breaks the world (its
// results left out); an abandoned call and the calls behind it end at once; the fifth call waits for the first to end
// before it takes its slots. Queued calls (NetGroup::prepareQueued), of several pieces, their copies on a stand-in copy
// stream, among async calls on one stream in order, each reading what the one before wrote; the order of a queued
// call's device side; which calls may be queued; queued calls that fail, or never run in a broken world, let their
// copy streams run through (their waits compared cyclically, as CUDA's); a queued call meets the same call waiting on
// the host on another rank; slots keep what a broken world outgrows.
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
#include "net_test_data.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

using coll::Bytes;
using testing::everySend;
using testing::onEveryRank;

// A GPU stream's order on a thread: each operation runs once those before it ended; an operation returns false
// while it cannot end yet (a wait), and is asked again. An operation still not ended after 10 s is given up and
// counted in stuck() (a test would hang otherwise).
class StandInStream {
 public:
  StandInStream() : thread_([this] { run(); }) {}
  ~StandInStream() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  StandInStream(const StandInStream&) = delete;
  StandInStream& operator=(const StandInStream&) = delete;

  // Queues `op`; returns its number (1, 2, ...): reached(n) once it ended.
  std::uint64_t queue(std::function<bool()> op) {
    const std::lock_guard<std::mutex> lock(mutex_);
    ops_.push_back(std::move(op));
    changed_.notify_all();
    return ++queued_;
  }
  void copies(const std::vector<SlotCopy>& copies) {
    queue([copies] {
      for (const SlotCopy& copy : copies) std::memmove(copy.dst, copy.src, copy.bytes);
      return true;
    });
  }
  // What the async call's kernel does (kernels/async_call.cu): copies in, the ticket to the copied-in flag, a wait
  // for the release, copies out unless the call failed.
  void kernel(const AsyncCall& async) {
    AsyncFlags* flags = async.flags;
    const std::uint64_t ticket = async.ticket;
    copies(async.copiesIn);
    queue([flags, ticket, set = async.set] {
      flags->copiedIn[set].value.store(ticket, std::memory_order_release);
      return true;
    });
    queue([flags, ticket] { return flags->release.value.load(std::memory_order_acquire) >= ticket; });
    queue([flags, ticket, out = async.copiesOut] {
      const std::uint64_t failed = flags->failedFrom.value.load(std::memory_order_acquire);
      if (failed != 0 && failed <= ticket) return true;
      for (const SlotCopy& copy : out) std::memmove(copy.dst, copy.src, copy.bytes);
      return true;
    });
  }
  bool reached(std::uint64_t op) const { return ended_.load() >= op; }
  // Waits until every operation queued so far ended.
  void drain() {
    const std::uint64_t last = [&] {
      const std::lock_guard<std::mutex> lock(mutex_);
      return queued_;
    }();
    while (!reached(last)) std::this_thread::yield();
  }
  int stuck() const { return stuck_.load(); }

 private:
  void run() {
    for (;;) {
      std::function<bool()> op;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stopping_ || !ops_.empty(); });
        if (ops_.empty()) return;
        op = std::move(ops_.front());
        ops_.pop_front();
      }
      const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!op()) {
        if (std::chrono::steady_clock::now() > giveUp) {
          ++stuck_;
          break;
        }
        std::this_thread::yield();
      }
      ++ended_;
    }
  }

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<bool()>> ops_;
  std::uint64_t queued_ = 0;
  std::atomic<std::uint64_t> ended_{0};
  std::atomic<int> stuck_{0};
  bool stopping_ = false;
  std::thread thread_;
};

NetOptions optionsWith(std::chrono::milliseconds timeout) {
  NetOptions options;
  options.timeout = timeout;
  options.path = NetPath::Staged;
  options.identity.hostId = "one";
  return options;
}

std::unique_ptr<NetWorld> hostWorld(std::unique_ptr<PointToPoint> p2p, NetOptions options) {
  return std::make_unique<NetWorld>(std::move(p2p), std::move(options), hostDeviceAccess(),
                                    std::make_unique<HostMemory>());
}

// One async call as the node world makes it, its kernel on `stream`.
void queueAsync(NetGroup& group, StandInStream& stream, const NetCall& call) {
  AsyncCall async = group.prepareAsync(call);
  stream.kernel(async);
  group.startAsync(std::move(async));
}

// Every collective on 3 ranks, out of place and (all-reduce) in place, f32 sum, f16 avg and i32 max, counts 1, 37
// and 300: on each rank, every call of a collective queued back to back on its stream (more calls than slot sets,
// so sets are reused while earlier calls' copies out are still queued), then each result against the closed form.
TEST(NetAsync, EveryCollectiveRightWithCallsInFlight) {
  const int n = 3;
  const int root = 1;
  int calls = 0;
  for (const Collective collective : {Collective::AllReduce, Collective::ReduceScatter, Collective::Reduce,
                                      Collective::AllGather, Collective::Broadcast, Collective::AllToAll}) {
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
    std::vector<std::vector<Bytes>> got(cases.size(), std::vector<Bytes>(n));
    std::vector<int> stuck(n, 0);
    const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
      auto world = hostWorld(std::move(p2p), optionsWith(std::chrono::milliseconds(5000)));
      auto group = world->group({0, 1, 2}, "three");
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
        queueAsync(*group, stream, call);
      }
      stream.drain();
      stuck[i] = stream.stuck();
      EXPECT_EQ(world->brokenBy(), "");
    });
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << collectiveName(collective) << " rank " << r;
      EXPECT_EQ(stuck[static_cast<std::size_t>(r)], 0) << collectiveName(collective) << " rank " << r;
    }
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const Case& c = cases[k];
      const std::vector<Bytes> want = coll::hostReduceReference(collective, c.type, c.op, n, c.count, root, sends[k]);
      const coll::Tolerance tol = reduces(collective) ? coll::tolerance(c.type, c.op, n, 8.0) : coll::Tolerance{};
      for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
        if (want[r].empty()) continue;  // reduce off the root
        const auto mismatch = coll::findMismatch(c.type, tol, want[r], got[k][r]);
        EXPECT_FALSE(mismatch) << collectiveName(collective) << " count " << c.count << ' ' << dataTypeName(c.type)
                               << (c.inPlace ? " in place" : "") << " rank " << r << ": " << *mismatch;
      }
      ++calls;
    }
  }
  EXPECT_EQ(calls, 6 * 9 + 9);
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
  // A piece whose output passes kAsyncSlotBytes: an all-gather of 3 x 96 KiB with pieces of 128 KiB.
  const auto large = onEveryRank(3, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    NetOptions options = optionsWith(std::chrono::milliseconds(5000));
    options.chunkBytes = 128 << 10;
    auto world = hostWorld(std::move(p2p), options);
    auto group = world->group({0, 1, 2}, "three");
    std::byte any[1];
    if (r == 0) {
      EXPECT_FALSE(group->asyncFits({Collective::AllGather, 24 << 10, DataType::F32, ReduceOp::Sum, 0, 0, any, any}));
      EXPECT_TRUE(group->asyncFits({Collective::AllGather, 16 << 10, DataType::F32, ReduceOp::Sum, 0, 0, any, any}));
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

// A queued call's device side on a stand-in copy stream. Its waits compare as CUDA's stream memory operations do:
// cyclically (CU_STREAM_WAIT_VALUE_GEQ: the signed difference at least 0).
void queueDeviceSide(StandInStream& copyStream, const std::vector<QueuedDeviceOp>& ops, AsyncFlags* flags) {
  for (const QueuedDeviceOp& op : ops) {
    switch (op.kind) {
      case QueuedDeviceOp::Kind::Copy: copyStream.copies({op.copy}); break;
      case QueuedDeviceOp::Kind::AwaitReady:
        copyStream.queue([flags, op] {
          const std::uint64_t ready = flags->pieceReady.value.load(std::memory_order_acquire);
          return static_cast<std::int64_t>(ready - op.ticket) >= 0;
        });
        break;
      case QueuedDeviceOp::Kind::Copied:
        copyStream.queue([flags, op] {
          flags->pieceCopied.value.store(op.ticket, std::memory_order_release);
          return true;
        });
        break;
    }
  }
}

// One queued call as the node world makes it: on the copy stream, after the caller's stream's work so far, the
// call's device side; the caller's stream's next work after them.
void queueQueued(NetGroup& group, StandInStream& stream, StandInStream& copyStream, const NetCall& call) {
  QueuedCall queued = group.prepareQueued(call);
  const std::vector<QueuedDeviceOp> ops = queued.deviceOps;
  AsyncFlags* flags = queued.flags;
  group.startQueued(std::move(queued));
  const std::uint64_t before = stream.queue([] { return true; });
  copyStream.queue([&stream, before] { return stream.reached(before); });
  queueDeviceSide(copyStream, ops, flags);
  const std::uint64_t after = copyStream.queue([] { return true; });
  stream.queue([&copyStream, after] { return copyStream.reached(after); });
}

// On 3 ranks, one stream each, a chain of calls where each reads what the one before wrote: an in-place all-reduce of
// 5000 i32 queued (pieces of 4 KiB: five, slots reused within the call), the stream copying its first 8 elements into
// a small buffer, a small async all-reduce of that buffer, the stream copying it back, a queued broadcast of the whole
// buffer from the round's root; four rounds. Any call that read its input early, or whose results the stream read
// before they were there, breaks the chain.
TEST(NetQueued, QueuedAndAsyncCallsOnOneStreamKeepItsOrder) {
  const int n = 3;
  const std::size_t count = 5000;
  const std::size_t small = 8;
  const int rounds = 4;
  std::vector<std::vector<std::int32_t>> got(n);
  // The closed form: the all-reduce makes every rank's buffer the sum; the small all-reduce multiplies the first
  // elements by n; the broadcast changes nothing then (every rank holds the same).
  std::vector<std::int64_t> want(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::int64_t v = 0;
    for (int r = 0; r < n; ++r) v += r * 1000 + static_cast<std::int64_t>(i % 97);
    want[i] = v;
  }
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < count; ++i) {
      if (round > 0) want[i] *= n;  // the all-reduce of equal buffers
      if (i < small) want[i] *= n;
    }
  }
  std::vector<int> stuck(n, 0);
  const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    NetOptions options = optionsWith(std::chrono::milliseconds(5000));
    options.chunkBytes = 4096;
    auto world = hostWorld(std::move(p2p), options);
    auto group = world->group({0, 1, 2}, "three");
    std::vector<std::int32_t>& buffer = got[static_cast<std::size_t>(r)];
    buffer.resize(count);
    for (std::size_t i = 0; i < count; ++i) buffer[i] = r * 1000 + static_cast<std::int32_t>(i % 97);
    std::vector<std::int32_t> first(small, -1);
    StandInStream stream;
    StandInStream copyStream;
    const std::size_t bytes = small * sizeof(std::int32_t);
    for (int round = 0; round < rounds; ++round) {
      const NetCall whole{Collective::AllReduce, count,        DataType::I32, ReduceOp::Sum, 0, 0,
                          buffer.data(),         buffer.data()};
      ASSERT_TRUE(group->queuedFits(whole));
      ASSERT_FALSE(group->asyncFits(whole));  // more than one piece
      queueQueued(*group, stream, copyStream, whole);
      stream.copies({{first.data(), buffer.data(), bytes}});
      queueAsync(*group, stream,
                 {Collective::AllReduce, small, DataType::I32, ReduceOp::Sum, 0, 0, first.data(), first.data()});
      stream.copies({{buffer.data(), first.data(), bytes}});
      queueQueued(
          *group, stream, copyStream,
          {Collective::Broadcast, count, DataType::I32, ReduceOp::Sum, 0, round % n, buffer.data(), buffer.data()});
    }
    stream.drain();
    stuck[static_cast<std::size_t>(r)] = stream.stuck() + copyStream.stuck();
    EXPECT_EQ(world->brokenBy(), "");
  });
  for (int r = 0; r < n; ++r) {
    const auto i = static_cast<std::size_t>(r);
    EXPECT_EQ(errors[i], "") << "rank " << r;
    EXPECT_EQ(stuck[i], 0) << "rank " << r;
    std::size_t wrong = 0;
    std::string firstWrong;
    for (std::size_t k = 0; k < count; ++k) {
      if (got[i][k] == want[k]) continue;
      if (wrong++ == 0) {
        firstWrong =
            "element " + std::to_string(k) + ": " + std::to_string(got[i][k]) + ", want " + std::to_string(want[k]);
      }
    }
    EXPECT_EQ(wrong, 0u) << "rank " << r << ", first " << firstWrong;
  }
}

// The device side of a call of 6 pieces over 4 slots: each piece copied in into slot p % 4 only once the slot's last
// piece was ready and copied out; every piece copied out once ready.
TEST(NetQueued, DeviceSideReusesASlotOnlyOnceItsLastPieceIsOut) {
  using Kind = QueuedDeviceOp::Kind;
  std::vector<std::vector<SlotCopy>> in, out;
  std::vector<std::uint64_t> tickets;
  std::byte caller[6], slot[4];
  for (std::size_t p = 0; p < 6; ++p) {
    in.push_back({{&slot[p % 4], &caller[p], 1}});
    out.push_back({{&caller[p], &slot[p % 4], 1}});
    tickets.push_back(10 + p);
  }
  const std::vector<QueuedDeviceOp> ops = queuedDeviceOps(in, out, tickets, 4);
  std::string order;
  for (const QueuedDeviceOp& op : ops) {
    switch (op.kind) {
      case Kind::Copy: {
        const auto* src = static_cast<const std::byte*>(op.copy.src);
        const bool fromSlot = src >= slot && src < slot + 4;  // a copy out, to the caller
        order += fromSlot ? "out" + std::to_string(static_cast<const std::byte*>(op.copy.dst) - caller)
                          : "in" + std::to_string(src - caller);
        break;
      }
      case Kind::AwaitReady: order += "ready" + std::to_string(op.ticket - 10); break;
      case Kind::Copied: order += "copied" + std::to_string(op.ticket - 10); break;
    }
    order += ' ';
  }
  EXPECT_EQ(order,
            "in0 copied0 in1 copied1 in2 copied2 in3 copied3 ready0 out0 in4 copied4 ready1 out1 in5 copied5 "
            "ready2 out2 ready3 out3 ready4 out4 ready5 out5 ");
  EXPECT_THROW(queuedDeviceOps({}, {}, {}, 4), Error);
}

TEST(NetQueued, OnlyStagedCollectivesAreQueued) {
  for (const bool on : {true, false}) {
    for (const bool direct : {false, true}) {
      const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
        NetOptions options = optionsWith(std::chrono::milliseconds(5000));
        options.asyncCalls = on;
        if (direct) options.path = NetPath::Direct;
        auto world = hostWorld(std::move(p2p), options);
        auto group = world->group({0, 1}, "two");
        if (r != 0) return;
        std::byte any[4];
        const auto call = [&](Collective collective, std::size_t count) {
          return NetCall{collective, count, DataType::F32, ReduceOp::Sum, 0, 0, any, any};
        };
        const bool expected = on && !direct;
        EXPECT_EQ(group->queuedFits(call(Collective::AllReduce, 1 << 24)), expected) << on << direct;
        EXPECT_EQ(group->queuedFits(call(Collective::AllToAll, 1)), expected) << on << direct;
        EXPECT_FALSE(group->queuedFits(call(Collective::AllReduce, 0)));  // nothing to move
        EXPECT_FALSE(group->queuedFits(call(Collective::SendRecv, 16)));  // send/recv groups wait on the host
      });
      for (const std::string& error : errors) EXPECT_EQ(error, "");
    }
  }
}

// A device whose staged memory makes the staged path's reductions itself, as a GPU's does (only the choice of which
// calls are queued reads it here).
class DeviceWithStagedMemory final : public DeviceAccess {
 public:
  void copyAsync(void* dst, const void* src, std::size_t bytes) override { host_->copyAsync(dst, src, bytes); }
  std::uint64_t mark() override { return host_->mark(); }
  bool reached(std::uint64_t marker) override { return host_->reached(marker); }
  void* allocateHost(std::size_t bytes) override { return host_->allocateHost(bytes); }
  void freeHost(void* memory) noexcept override { host_->freeHost(memory); }
  std::unique_ptr<LocalMemory> stagedMemory() override { return std::make_unique<HostMemory>(); }

 private:
  std::unique_ptr<DeviceAccess> host_ = hostDeviceAccess();
};

// Where the staged path reduces on the GPU, a call whose reductions it would make there waits on the host instead of
// being queued (a queued call reduces on the host); calls without reductions, and those it would reduce on the host
// anyway, are queued. Two ranks, pieces of 4 MiB, f32.
TEST(NetQueued, CallsTheGpuWouldReduceAreNotQueued) {
  for (const NetReduce reduce : {NetReduce::Auto, NetReduce::Gpu, NetReduce::Host}) {
    const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
      NetOptions options = optionsWith(std::chrono::milliseconds(5000));
      options.reduce = reduce;
      auto world = std::make_unique<NetWorld>(std::move(p2p), options, std::make_unique<DeviceWithStagedMemory>(),
                                              std::make_unique<HostMemory>());
      auto group = world->group({0, 1}, "two");
      if (r != 0) return;
      std::byte any[4];
      const auto queued = [&](Collective collective, std::size_t bytes) {
        return group->queuedFits({collective, bytes / 4, DataType::F32, ReduceOp::Sum, 0, 0, any, any});
      };
      const std::size_t MiB = std::size_t{1} << 20;
      const bool onAuto = reduce == NetReduce::Auto;
      const bool host = reduce == NetReduce::Host;  // no staged memory on the device: every reduction the host's
      const char* name = onAuto ? "AUTO" : host ? "HOST" : "GPU";
      EXPECT_TRUE(queued(Collective::AllGather, 16 * MiB)) << name;  // no reductions
      EXPECT_TRUE(queued(Collective::Broadcast, 16 * MiB)) << name;
      EXPECT_TRUE(queued(Collective::AllToAll, 16 * MiB)) << name;
      EXPECT_EQ(queued(Collective::AllReduce, MiB), onAuto || host) << name;  // one piece, reductions of 512 KiB
      EXPECT_EQ(queued(Collective::Reduce, MiB), onAuto || host) << name;     // one piece, a reduction of 1 MiB
      EXPECT_EQ(queued(Collective::AllReduce, 16 * MiB), host) << name;       // four pieces
      EXPECT_EQ(queued(Collective::Reduce, 4 * MiB), host) << name;           // a reduction of 4 MiB
    });
    for (const std::string& error : errors) EXPECT_EQ(error, "");
  }
}

// Two queued calls, prepared before either starts (a caller's thread goes on at once): rank 0 could not queue the
// first one's copies (abandoned), so its job fails at once and breaks the world; rank 1's first one times out at the
// deadline naming rank 0. Every piece of both calls is marked ready whatever happened -- the second call's too, whose
// job never runs in a broken world -- so that every copy stream runs through to the end; the next call is refused
// naming why. The copy streams wait as CUDA's do (cyclic comparisons): a ready word past every ticket would hold them
// forever.
TEST(NetQueued, FailedQueuedCallsLetTheirCopyStreamsRunThrough) {
  const auto timeout = std::chrono::milliseconds(300);
  std::vector<std::string> broken(2), refused(2);
  std::vector<int> stuck(2, -1);
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    NetOptions options = optionsWith(timeout);
    options.chunkBytes = 4096;
    auto world = hostWorld(std::move(p2p), options);
    auto group = world->group({0, 1}, "two");
    std::vector<float> first(6000, 1.0f), second(6000, 2.0f);
    const auto callOf = [](std::vector<float>& data) {
      return NetCall{Collective::AllReduce, data.size(), DataType::F32, ReduceOp::Sum, 0, 0, data.data(), data.data()};
    };
    QueuedCall a = group->prepareQueued(callOf(first));
    QueuedCall b = group->prepareQueued(callOf(second));
    ASSERT_EQ(a.tickets.size(), 6u);  // 24000 bytes in pieces of 4 KiB: more pieces than slots
    AsyncFlags* flags = a.flags;
    std::vector<QueuedDeviceOp> ops = b.deviceOps;
    if (r == 1) ops.insert(ops.begin(), a.deviceOps.begin(), a.deviceOps.end());
    if (r == 0) a.abandoned->store(true);  // its copies never queued
    group->startQueued(std::move(a));
    group->startQueued(std::move(b));
    const auto i = static_cast<std::size_t>(r);
    {
      StandInStream copyStream;
      queueDeviceSide(copyStream, ops, flags);
      copyStream.drain();
      stuck[i] = copyStream.stuck();
    }
    broken[i] = world->brokenBy();
    try {
      group->prepareQueued(callOf(first));
    } catch (const Error& error) {
      refused[i] = std::string(errorCodeName(error.code())) + ": " + error.what();
    }
  });
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  for (int r = 0; r < 2; ++r) {
    const auto i = static_cast<std::size_t>(r);
    EXPECT_EQ(stuck[i], 0) << "rank " << r << ": a wait of the copy stream never ended";
    EXPECT_NE(refused[i].find("RemoteError: net: an earlier call failed"), std::string::npos) << refused[i];
  }
  EXPECT_NE(broken[0].find("the caller could not queue the call's copies"), std::string::npos) << broken[0];
  EXPECT_NE(broken[1].find("rank 0"), std::string::npos) << broken[1];
}

// A call of five pieces queued on rank 0 and waiting on the host on rank 1 (PEERLINK_NET_ASYNC off there, or a GPU
// without 64-bit stream memory operations): the same messages on the same tags (piece p on lane p % 2, as the staged
// path runs two pieces at a time), so both get the sum.
TEST(NetQueued, AQueuedCallMeetsTheSameCallWaitingOnAnotherRank) {
  const std::size_t count = 5000;
  std::vector<std::vector<std::int32_t>> got(2);
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    NetOptions options = optionsWith(std::chrono::milliseconds(2000));
    options.chunkBytes = 4096;
    options.asyncCalls = r == 0;
    auto world = hostWorld(std::move(p2p), options);
    auto group = world->group({0, 1}, "two");
    std::vector<std::int32_t>& data = got[static_cast<std::size_t>(r)];
    data.resize(count);
    for (std::size_t k = 0; k < count; ++k) data[k] = static_cast<std::int32_t>(k) * (r + 1);
    const NetCall call{Collective::AllReduce, count, DataType::I32, ReduceOp::Sum, 0, 0, data.data(), data.data()};
    if (r == 1) {
      ASSERT_FALSE(group->queuedFits(call));
      group->run(call);
      return;
    }
    ASSERT_TRUE(group->queuedFits(call));
    StandInStream stream;
    StandInStream copyStream;
    queueQueued(*group, stream, copyStream, call);
    stream.drain();
    EXPECT_EQ(stream.stuck() + copyStream.stuck(), 0);
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < count; ++k)
      wrong += got[static_cast<std::size_t>(r)][k] != static_cast<std::int32_t>(k) * 3;
    EXPECT_EQ(wrong, 0u) << "rank " << r;
  }
}

// Memory the slots outgrow is kept, not freed, once the world broke (messages of the failed call may still land in
// it): a queued call prepared beside a failing one may grow the slots just after the failure.
TEST(NetQueued, SlotsNeverFreeWhatALeakedWorldOutgrows) {
  struct Counting final : DeviceAccess {
    std::unique_ptr<DeviceAccess> host = hostDeviceAccess();
    int freed = 0;
    void copyAsync(void* dst, const void* src, std::size_t bytes) override { host->copyAsync(dst, src, bytes); }
    std::uint64_t mark() override { return host->mark(); }
    bool reached(std::uint64_t marker) override { return host->reached(marker); }
    void* allocateHost(std::size_t bytes) override { return host->allocateHost(bytes); }
    void freeHost(void* memory) noexcept override {
      ++freed;
      host->freeHost(memory);
    }
  } device;
  std::vector<void*> kept;
  {
    StagingSlots slots(device);
    slots.reserve(64, 64, 64, std::chrono::milliseconds(1000));
    slots.reserve(128, 64, 64, std::chrono::milliseconds(1000));
    EXPECT_EQ(device.freed, 4) << "a healthy world frees the inputs it outgrew";
    for (std::size_t s = 0; s < StagingSlots::kSlots; ++s) kept.push_back(slots.slot(s).input);
    slots.leak();
    slots.reserve(256, 64, 64, std::chrono::milliseconds(1000));
    EXPECT_EQ(device.freed, 4) << "a leaked world freed memory it outgrew";
  }
  EXPECT_EQ(device.freed, 4) << "a leaked world freed its slots at its end";
  for (void* memory : kept) device.host->freeHost(memory);  // (the test's own: nothing reads them)
}

}  // namespace
}  // namespace peerlink::net
