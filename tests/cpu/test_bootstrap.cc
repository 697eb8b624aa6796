// The bootstrap working: a world of real processes on loopback (rendezvous, all-gather, send/recv by tag,
// barrier), the same calls between threads, peers lost after creation (killed, aborted), the errors of calls
// (sizes, deadlines), and the unique id through a key-value store.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "bootstrap_test_support.hpp"

namespace peerlink {
namespace {

using namespace std::chrono_literals;
using namespace ::peerlink::testing;

std::vector<std::uint8_t> bytesOf(const std::string& text) {
  return std::vector<std::uint8_t>(text.begin(), text.end());
}
std::string textOf(const std::vector<std::uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

class BootstrapWorld : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_TRUE(rootsEndWithin(5s)) << "a bootstrap root is still running"; }
};

// Everything a rank can do, checked inside it: returns what went wrong, empty when all was right.
std::string exerciseEveryCall(Bootstrap& bootstrap) {
  const int rank = bootstrap.rank();
  const int size = bootstrap.size();
  std::string problems;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) problems += what + "; ";
  };

  // Identities: this rank's is this process; ranks are distinct processes of this machine.
  expect(bootstrap.peers().size() == static_cast<std::size_t>(size), "peers() size");
  expect(bootstrap.peers()[static_cast<std::size_t>(rank)].pid == ::getpid(), "own pid");
  std::set<int> pids;
  for (const PeerIdentity& peer : bootstrap.peers()) pids.insert(peer.pid);
  expect(pids.size() == 1 || pids.size() == static_cast<std::size_t>(size), "one pid per rank, or all one process");
  for (int r = 0; r < size; ++r) expect(bootstrap.peers()[static_cast<std::size_t>(r)].rank == r, "peer rank");
  expect(bootstrap.peers()[0].hostId == bootstrap.peers()[static_cast<std::size_t>(size - 1)].hostId, "host ids");

  // All-gather of 64 bytes, and of 0.
  std::vector<std::uint8_t> mine(64);
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = static_cast<std::uint8_t>(rank * 31 + i);
  const std::vector<std::uint8_t> all = bootstrap.allGather(mine.data(), mine.size());
  expect(all.size() == mine.size() * size, "allGather size");
  for (int r = 0; r < size && all.size() == mine.size() * size; ++r) {
    for (std::size_t i = 0; i < mine.size(); ++i) {
      if (all[static_cast<std::size_t>(r) * mine.size() + i] != static_cast<std::uint8_t>(r * 31 + i)) {
        expect(false, fmt::format("allGather byte {} of rank {}", i, r));
        break;
      }
    }
  }
  expect(bootstrap.allGather(nullptr, 0).empty(), "empty allGather");

  // Send/recv around the ring, two tags, two messages on one tag (in order), one to itself, one large.
  const int next = (rank + 1) % size;
  const int previous = (rank + size - 1) % size;
  const std::vector<std::uint8_t> large(1 << 20, static_cast<std::uint8_t>(rank));
  bootstrap.send(next, 9, bytesOf(fmt::format("nine from {}", rank)).data(), 11 + (rank > 9 ? 1 : 0));
  bootstrap.send(next, 5, bytesOf(fmt::format("first from {}", rank)).data(), 12);
  bootstrap.send(next, 5, bytesOf(fmt::format("then from {}", rank)).data(), 11);
  bootstrap.send(rank, 7, "self", 4);
  bootstrap.send(next, 11, large.data(), large.size());
  expect(textOf(bootstrap.recv(previous, 5)) == fmt::format("first from {}", previous), "first on tag 5");
  expect(textOf(bootstrap.recv(previous, 5)) == fmt::format("then from {}", previous), "second on tag 5");
  expect(textOf(bootstrap.recv(previous, 9)) == fmt::format("nine from {}", previous), "tag 9");
  expect(textOf(bootstrap.recv(rank, 7)) == "self", "self message");
  const std::vector<std::uint8_t> big = bootstrap.recv(previous, 11);
  expect(big == std::vector<std::uint8_t>(1 << 20, static_cast<std::uint8_t>(previous)), "1 MiB message");
  bootstrap.barrier();
  bootstrap.barrier();
  return problems;
}

TEST_F(BootstrapWorld, FourProcessesRendezvousAndExchange) {
  constexpr int kRanks = 4;
  ProcessWorld world;
  for (int rank = 0; rank < kRanks; ++rank) {
    world.spawn([rank](const UniqueId& id, const Reporter& reporter) {
      auto bootstrap = connectBootstrap(id, rank, kRanks, optionsWith(5000ms));
      if (bootstrap->rank() != rank || bootstrap->size() != kRanks) return kChildWrongResult;
      const std::string problems = exerciseEveryCall(*bootstrap);
      reporter.say(problems.empty() ? "ok" : problems);
      return problems.empty() ? kChildOk : kChildWrongResult;
    });
  }
  const UniqueId id = makeUniqueId(loopbackParams(5000ms));
  EXPECT_EQ(uniqueIdAddress(id).rfind("127.0.0.1:", 0), 0u) << uniqueIdAddress(id);
  world.start(id);
  for (const auto& outcome : world.finish()) {
    EXPECT_EQ(outcome.exitCode, kChildOk);
    EXPECT_EQ(outcome.report, "ok");
  }
}

TEST_F(BootstrapWorld, OneRankWorld) {
  const UniqueId id = makeUniqueId(loopbackParams(2000ms));
  auto bootstrap = connectBootstrap(id, 0, 1, optionsWith(2000ms));
  EXPECT_EQ(exerciseEveryCall(*bootstrap), "");
}

TEST_F(BootstrapWorld, ThreadBootstrapsDoEveryCall) {
  constexpr int kRanks = 4;
  auto world = threadBootstraps(kRanks, optionsWith(5000ms));
  ASSERT_EQ(world.size(), static_cast<std::size_t>(kRanks));
  std::vector<std::string> problems(kRanks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        // Every identity is this process, so the pid check is all of them.
        problems[static_cast<std::size_t>(rank)] = exerciseEveryCall(*world[static_cast<std::size_t>(rank)]);
      } catch (const Error& error) {
        problems[static_cast<std::size_t>(rank)] = error.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int rank = 0; rank < kRanks; ++rank) EXPECT_EQ(problems[static_cast<std::size_t>(rank)], "") << rank;
}

// What onPeerLost reported, "rank: why" each; awaitFirst waits (bounded) for the first.
struct LossRecorder {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> reports;
  void record(int rank, const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex);
    reports.push_back(fmt::format("{}: {}", rank, why));
    changed.notify_all();
  }
  std::string awaitFirst(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait_for(lock, timeout, [&] { return !reports.empty(); });
    return reports.empty() ? "" : reports.front();
  }
};

TEST_F(BootstrapWorld, ThreadBootstrapAbortReachesEveryPeer) {
  LossRecorder recorder;  // before the world: its callbacks use it until the world is gone
  auto world = threadBootstraps(3, optionsWith(5000ms));
  world[0]->onPeerLost([&](int rank, const std::string& why) { recorder.record(rank, why); });
  std::thread waiter([&] {
    const Error error = expectError(ErrorCode::RemoteError, [&] { world[2]->recv(1, 4); });
    EXPECT_TRUE(contains(error.what(), "rank 1 ("));
    EXPECT_TRUE(contains(error.what(), "aborted: the loss diverged"));
  });
  std::this_thread::sleep_for(50ms);
  world[1]->abort("the loss diverged");
  waiter.join();
  // Rank 1 itself: every later call fails, naming its own abort.
  const Error own = expectError(ErrorCode::RemoteError, [&] { world[1]->barrier(); });
  EXPECT_TRUE(contains(own.what(), "the loss diverged"));
  // Rank 0 needs rank 1 for a barrier: it fails at once rather than at the deadline.
  const auto start = Clock::now();
  const Error error = expectError(ErrorCode::RemoteError, [&] { world[0]->barrier(); });
  EXPECT_LT(msSince(start), 1000);
  EXPECT_TRUE(contains(error.what(), "rank 1 ("));
  // The callback runs on rank 0's watchdog right after the loss wakes the barrier: wait for it, then for a
  // second report that must not come.
  EXPECT_EQ(recorder.awaitFirst(2000ms).rfind("1: rank 1 (", 0), 0u);
  std::this_thread::sleep_for(100ms);
  std::lock_guard<std::mutex> lock(recorder.mutex);
  EXPECT_EQ(recorder.reports.size(), 1u);
}

TEST_F(BootstrapWorld, ADestroyedPeerIsNotLost) {
  std::atomic<int> lost{0};
  auto world = threadBootstraps(2, optionsWith(2000ms));
  world[0]->onPeerLost([&](int, const std::string&) { ++lost; });
  world[1]->send(0, 3, "last words", 10);
  world[1].reset();                                       // its goodbye
  EXPECT_EQ(textOf(world[0]->recv(1, 3)), "last words");  // what it sent before leaving still arrives
  const Error error = expectError(ErrorCode::RemoteError, [&] { world[0]->recv(1, 3); });
  EXPECT_TRUE(contains(error.what(), "has closed its bootstrap"));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(lost.load(), 0);
}

// A rank that is killed after the world was built: every survivor's callback names it within about a second,
// once, and calls that need it fail at once. `holdSockets`: the killed rank first forks a child that keeps its
// connections open, so only the pidfd can tell (no end of connection reaches the survivors).
void expectKilledPeerReported(bool holdSockets, const std::string& victimHostId) {
  constexpr int kRanks = 3;
  constexpr int kVictim = 2;
  ProcessWorld world;
  for (int rank = 0; rank < kRanks; ++rank) {
    world.spawn([=](const UniqueId& id, const Reporter& reporter) {
      LossRecorder recorder;
      auto bootstrap = connectBootstrap(id, rank, kRanks, optionsWith(5000ms, rank == kVictim ? victimHostId : ""));
      if (rank == kVictim) {
        bootstrap->barrier();
        if (holdSockets && ::fork() == 0) {
          std::this_thread::sleep_for(4s);  // holds every inherited connection open, then goes
          ::_exit(0);
        }
        ::raise(SIGKILL);
      }
      bootstrap->onPeerLost([&](int lostRank, const std::string& why) { recorder.record(lostRank, why); });
      bootstrap->barrier();
      const auto killedAround = Clock::now();
      const std::string first = recorder.awaitFirst(3000ms);
      const long long delay = msSince(killedAround);
      const std::string victim = describePeer(bootstrap->peers()[kVictim]);
      // The pidfd's report is the bare exit; the connection's says how it ended.
      const std::string expected = fmt::format("2: {} exited", victim);
      std::string problems;
      if (holdSockets ? first != expected
                      : first.rfind(expected + ": its bootstrap connection closed without a goodbye", 0) != 0) {
        problems += "report '" + first + "'; ";
      }
      if (delay > 1500) problems += fmt::format("reported after {} ms; ", delay);
      try {
        bootstrap->recv(kVictim, 1);
        problems += "recv from the dead rank returned; ";
      } catch (const Error& error) {
        if (error.code() != ErrorCode::RemoteError || std::string(error.what()).find(victim) == std::string::npos) {
          problems += std::string("recv: ") + error.what() + "; ";
        }
      }
      try {
        bootstrap->allGather("x", 1);
        problems += "allGather with a dead rank returned; ";
      } catch (const Error& error) {
        if (error.code() != ErrorCode::RemoteError) problems += std::string("allGather: ") + error.what() + "; ";
      }
      std::this_thread::sleep_for(200ms);
      {
        std::lock_guard<std::mutex> lock(recorder.mutex);
        if (recorder.reports.size() != 1) problems += fmt::format("{} reports; ", recorder.reports.size());
      }
      reporter.say(problems.empty() ? first : problems);
      return problems.empty() ? kChildOk : kChildWrongResult;
    });
  }
  world.start(makeUniqueId(loopbackParams(5000ms)));
  const auto outcomes = world.finish();
  for (int rank = 0; rank < kRanks; ++rank) {
    if (rank == kVictim) {
      EXPECT_EQ(outcomes[rank].exitCode, 128 + SIGKILL);
      continue;
    }
    EXPECT_EQ(outcomes[rank].exitCode, kChildOk) << outcomes[rank].report;
    EXPECT_TRUE(contains(outcomes[rank].report, holdSockets ? "exited" : "without a goodbye"));
  }
}

TEST_F(BootstrapWorld, KilledPeerOfAnotherHostIsReportedByItsConnection) {
  expectKilledPeerReported(false, "another-node");
}

TEST_F(BootstrapWorld, KilledPeerOfThisHostIsReportedByItsPidfd) {
  if (!havePidfd()) GTEST_SKIP() << "pidfd_open is not available on this kernel (Linux < 5.3)";
  expectKilledPeerReported(true, "");
}

TEST_F(BootstrapWorld, AbortIsReportedWithItsReason) {
  ProcessWorld world;
  world.spawn([](const UniqueId& id, const Reporter& reporter) {
    LossRecorder recorder;
    auto bootstrap = connectBootstrap(id, 0, 2, optionsWith(5000ms));
    bootstrap->onPeerLost([&](int rank, const std::string& why) { recorder.record(rank, why); });
    return reportError(reporter, [&] { bootstrap->recv(1, 0); }) == kChildOk &&
                   recorder.awaitFirst(2000ms).find("aborted: CUDA error on GPU 1") != std::string::npos
               ? kChildOk
               : kChildWrongResult;
  });
  world.spawn([](const UniqueId& id, const Reporter&) {
    auto bootstrap = connectBootstrap(id, 1, 2, optionsWith(5000ms));
    bootstrap->abort("CUDA error on GPU 1");
    std::this_thread::sleep_for(300ms);
    return kChildOk;
  });
  world.start(makeUniqueId(loopbackParams(5000ms)));
  const auto outcomes = world.finish();
  EXPECT_EQ(outcomes[0].exitCode, kChildOk) << outcomes[0].report;
  EXPECT_EQ(outcomes[1].exitCode, kChildOk);
  EXPECT_TRUE(contains(outcomes[0].report, "RemoteError: bootstrap recv from rank 1 (tag 0) on rank 0: rank 1 (host"));
  EXPECT_TRUE(contains(outcomes[0].report, "aborted: CUDA error on GPU 1"));
}

TEST_F(BootstrapWorld, CallErrorsNameRanksSizesAndDeadlines) {
  auto world = threadBootstraps(3, optionsWith(400ms));
  // Sizes that differ: each rank names the other and both sizes.
  std::vector<std::string> messages(3);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 3; ++rank) {
    threads.emplace_back([&, rank] {
      const std::uint64_t value = 7;
      try {
        world[static_cast<std::size_t>(rank)]->allGather(&value, rank == 1 ? 8 : 4);
      } catch (const Error& error) {
        messages[static_cast<std::size_t>(rank)] = describeError(error);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_TRUE(
      contains(messages[0], "InvalidUsage: bootstrap allGather on rank 0: this rank gave 4 bytes, rank 1 (host"));
  EXPECT_TRUE(contains(messages[0], "gave 8: every rank must give the same size"));
  EXPECT_TRUE(contains(messages[1], "this rank gave 8 bytes, rank 0 (host"));

  // A recv nobody answers: the deadline, naming the peer and the tag.
  auto start = Clock::now();
  const Error silent = expectError(ErrorCode::Timeout, [&] { world[0]->recv(2, 6); });
  EXPECT_GE(msSince(start), 400);
  EXPECT_LT(msSince(start), 2000);
  EXPECT_TRUE(contains(silent.what(),
                       "bootstrap recv from rank 2 (tag 6) on rank 0 timed out after 400 ms: "
                       "rank 2 (host"));
  // A barrier only rank 0 enters: the ranks that never came.
  start = Clock::now();
  const Error alone = expectError(ErrorCode::Timeout, [&] { world[0]->barrier(); });
  EXPECT_LT(msSince(start), 2000);
  EXPECT_TRUE(contains(alone.what(),
                       "bootstrap barrier on rank 0 timed out after 400 ms: ranks 1, 2 of 3 sent "
                       "nothing (they have not called barrier, or are stuck)"));

  // Arguments.
  EXPECT_THROW(world[0]->send(3, 0, "x", 1), Error);
  EXPECT_THROW(world[0]->send(1, -1, "x", 1), Error);
  EXPECT_THROW(world[0]->recv(-1, 0), Error);
  EXPECT_THROW(world[0]->send(1, 0, nullptr, 1), Error);
  EXPECT_THROW(world[0]->allGather(nullptr, kMaxBootstrapMessageBytes + 1), Error);
}

// A key-value store as an application has one: the id travels as text under a key.
class FakeStore {
 public:
  void set(const std::string& key, const std::string& value) {
    std::lock_guard<std::mutex> lock(mutex_);
    values_[key] = value;
  }
  std::optional<std::string> get(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = values_.find(key);
    if (found == values_.end()) return std::nullopt;
    return found->second;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::string> values_;
};

TEST_F(BootstrapWorld, StoreCarriesTheIdToEveryRank) {
  FakeStore store;
  auto set = [&](const std::string& key, const std::string& value) { store.set(key, value); };
  auto get = [&](const std::string& key) { return store.get(key); };
  constexpr int kRanks = 3;
  std::vector<std::string> problems(kRanks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        if (rank == 0) std::this_thread::sleep_for(100ms);  // the others poll meanwhile
        const UniqueId id = exchangeUniqueId(rank, "peerlink/test", set, get, 3000ms, loopbackParams(3000ms));
        // The ranks of one process rendezvous like processes would.
        auto bootstrap = connectBootstrap(id, rank, kRanks, optionsWith(3000ms));
        const int value = rank;
        const std::vector<std::uint8_t> all = bootstrap->allGather(&value, sizeof(value));
        std::vector<int> ranks(kRanks);
        std::memcpy(ranks.data(), all.data(), all.size());
        if (ranks != std::vector<int>{0, 1, 2}) problems[static_cast<std::size_t>(rank)] = "wrong all-gather";
      } catch (const Error& error) {
        problems[static_cast<std::size_t>(rank)] = error.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int rank = 0; rank < kRanks; ++rank) EXPECT_EQ(problems[static_cast<std::size_t>(rank)], "") << rank;
  EXPECT_TRUE(store.get("peerlink/test").has_value());
}

TEST(BootstrapStore, MissingAndGarbageValuesAreNamed) {
  FakeStore store;
  auto set = [&](const std::string& key, const std::string& value) { store.set(key, value); };
  auto get = [&](const std::string& key) { return store.get(key); };
  const auto start = Clock::now();
  const Error missing = expectError(ErrorCode::Timeout, [&] { exchangeUniqueId(1, "job-7/id", set, get, 300ms); });
  EXPECT_GE(msSince(start), 300);
  EXPECT_TRUE(contains(missing.what(), "the store had no key 'job-7/id' within 300 ms"));
  store.set("job-7/id", "not an id");
  const Error garbage = expectError(ErrorCode::InvalidInput, [&] { exchangeUniqueId(2, "job-7/id", set, get, 300ms); });
  EXPECT_TRUE(contains(garbage.what(), "the store's value of 'job-7/id' is not a peerlink unique id"));
  EXPECT_THROW(exchangeUniqueId(1, "", set, get, 300ms), Error);
}

}  // namespace
}  // namespace peerlink
