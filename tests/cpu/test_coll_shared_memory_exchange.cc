// The all-gather through shared memory (coll/shared_memory_exchange.hpp) and the segments under it
// (coll/host_segments.hpp): threads stand for processes, each with its own bootstraps and its own mapping of every
// segment, so the slots' protocol runs on real shared memory.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "child_process.hpp"
#include "coll/bootstrap_exchange.hpp"
#include "coll/host_segments.hpp"
#include "coll/shared_memory_exchange.hpp"
#include "full_filesystem.hpp"
#include "peerlink/bootstrap.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

using namespace std::chrono_literals;

const std::function<void()> kAlive = [] {};

// A world of `processes`, process p driving the ranks processes[p]; body(p, world, sockets) runs on a thread per
// process. Exceptions a body throws are rethrown here (the first).
void runWorld(const std::vector<std::vector<int>>& processes,
              const std::function<void(std::size_t, const World&, const WorldAllGather&)>& body) {
  int nranks = 0;
  for (const auto& ranks : processes) nranks += static_cast<int>(ranks.size());
  BootstrapOptions options;
  options.deadline = 5000ms;
  std::vector<std::unique_ptr<Bootstrap>> bootstraps = threadBootstraps(nranks, options);
  std::vector<std::exception_ptr> errors(processes.size());
  std::vector<std::thread> threads;
  for (std::size_t p = 0; p < processes.size(); ++p) {
    threads.emplace_back([&, p] {
      try {
        World world;
        world.nranks = nranks;
        world.localRanks = processes[p];
        world.spansProcesses = processes.size() > 1;
        std::vector<Bootstrap*> local;
        for (const int r : processes[p]) local.push_back(bootstraps[static_cast<std::size_t>(r)].get());
        BootstrapExchange exchange(local);
        const WorldAllGather sockets = [&exchange](const std::vector<std::vector<std::uint8_t>>& blobs,
                                                   std::size_t bytes) { return exchange.allGather(blobs, bytes); };
        body(p, world, sockets);
      } catch (...) {
        errors[p] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

std::uint8_t byteOf(int rank, int round, std::size_t i) {
  return static_cast<std::uint8_t>(rank * 31 + round * 7 + static_cast<int>(i));
}

// Every rank's blob reaches every process, round after round, blobs of every size, one process now and then late.
void expectEveryBlobEverywhere(const std::vector<std::vector<int>>& processes, int rounds) {
  std::atomic<int> wrong{0};
  runWorld(processes, [&](std::size_t p, const World& world, const WorldAllGather& sockets) {
    SharedMemoryExchange exchange(world, sockets);
    for (int round = 0; round < rounds; ++round) {
      const std::size_t bytes = 1 + static_cast<std::size_t>(round) % SharedMemoryExchange::kMaxBytes;
      std::vector<std::vector<std::uint8_t>> mine;
      for (const int r : world.localRanks) {
        std::vector<std::uint8_t> blob(bytes);
        for (std::size_t i = 0; i < bytes; ++i) blob[i] = byteOf(r, round, i);
        mine.push_back(std::move(blob));
      }
      if (p == 0 && round % 997 == 0) std::this_thread::sleep_for(2ms);
      const std::vector<std::uint8_t> all = exchange.allGather(mine, bytes, 5s, kAlive);
      if (all.size() != bytes * static_cast<std::size_t>(world.nranks)) {
        ++wrong;
        continue;
      }
      for (int r = 0; r < world.nranks; ++r) {
        for (std::size_t i = 0; i < bytes; ++i) {
          if (all[static_cast<std::size_t>(r) * bytes + i] != byteOf(r, round, i)) ++wrong;
        }
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(SharedMemoryExchange, TwoProcessesMeetRoundAfterRound) {
  expectEveryBlobEverywhere({{0}, {1}}, 20000);
}

TEST(SharedMemoryExchange, ThreeProcessesMeetRoundAfterRound) {
  expectEveryBlobEverywhere({{0}, {1}, {2}}, 10000);
}

TEST(SharedMemoryExchange, AProcessWithTwoRanks) {
  expectEveryBlobEverywhere({{0, 1}, {2}}, 5000);
}

TEST(SharedMemoryExchange, ARankThatDoesNotComeTimesOutNamedAndTheExchangeStaysFailed) {
  std::string timeout;
  std::string after;
  runWorld({{0}, {1}, {2}}, [&](std::size_t p, const World& world, const WorldAllGather& sockets) {
    SharedMemoryExchange exchange(world, sockets);
    if (p == 2) return;  // never calls
    const auto start = std::chrono::steady_clock::now();
    try {
      exchange.allGather({{1, 2, 3}}, 3, 50ms, kAlive);
      ADD_FAILURE() << "process " << p << " met a rank that never came";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::Timeout);
      EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
      if (p == 0) timeout = error.what();
    }
    try {
      exchange.allGather({{1, 2, 3}}, 3, 50ms, kAlive);
      ADD_FAILURE() << "a failed exchange went on";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::RemoteError);
      if (p == 0) after = error.what();
    }
  });
  EXPECT_NE(timeout.find("rank(s) 2 did not come"), std::string::npos) << timeout;
  EXPECT_NE(after.find("failed before"), std::string::npos) << after;
}

TEST(SharedMemoryExchange, ALostPeerStopsTheWait) {
  runWorld({{0}, {1}}, [&](std::size_t p, const World& world, const WorldAllGather& sockets) {
    SharedMemoryExchange exchange(world, sockets);
    if (p == 1) return;
    int checks = 0;
    const std::function<void()> lost = [&checks] {
      if (++checks == 3) throw Error(ErrorCode::RemoteError, "rank 1 was lost");
    };
    try {
      exchange.allGather({{7}}, 1, 10s, lost);
      ADD_FAILURE() << "the wait went on past a lost peer";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::RemoteError);
      EXPECT_STREQ(error.what(), "rank 1 was lost");
    }
  });
}

TEST(SharedMemoryExchange, BlobsOfAnotherSizeAreDifferentCalls) {
  std::atomic<int> invalid{0};
  runWorld({{0}, {1}}, [&](std::size_t p, const World& world, const WorldAllGather& sockets) {
    SharedMemoryExchange exchange(world, sockets);
    const std::size_t bytes = p == 0 ? 8 : 16;
    try {
      exchange.allGather({std::vector<std::uint8_t>(bytes, 1)}, bytes, 2s, kAlive);
    } catch (const Error& error) {
      if (error.code() == ErrorCode::InvalidUsage) ++invalid;
    }
  });
  EXPECT_EQ(invalid.load(), 2);
}

TEST(SharedMemoryExchange, ABlobTooLargeIsRefused) {
  runWorld({{0}}, [&](std::size_t, const World& world, const WorldAllGather& sockets) {
    SharedMemoryExchange exchange(world, sockets);
    const std::size_t bytes = SharedMemoryExchange::kMaxBytes + 1;
    try {
      exchange.allGather({std::vector<std::uint8_t>(bytes)}, bytes, 1s, kAlive);
      ADD_FAILURE() << "a blob past kMaxBytes went through";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::Internal);
    }
    // Refused before it counted: the next call still meets.
    EXPECT_EQ(exchange.allGather({{9}}, 1, 1s, kAlive), std::vector<std::uint8_t>{9});
  });
}

// allGather and allGatherWithin mixed, with patience to spare: every exchange succeeds, every blob everywhere.
TEST(SharedMemoryExchange, WithinPatienceEveryRankComes) {
  std::atomic<int> wrong{0};
  std::atomic<int> leftEarly{0};
  runWorld({{0}, {1, 2}}, [&](std::size_t, const World& world, const WorldAllGather& sockets) {
    SharedMemoryExchange exchange(world, sockets);
    for (int round = 0; round < 3000; ++round) {
      std::vector<std::vector<std::uint8_t>> mine;
      for (const int r : world.localRanks) mine.push_back({byteOf(r, round, 0), byteOf(r, round, 1)});
      std::optional<std::vector<std::uint8_t>> all;
      if (round % 2 == 0) {
        all = exchange.allGatherWithin(mine, 2, 2s, 5s, kAlive);
      } else {
        all = exchange.allGather(mine, 2, 5s, kAlive);
      }
      if (!all) {
        ++leftEarly;
        continue;
      }
      for (int r = 0; r < 3; ++r) {
        if ((*all)[2 * r] != byteOf(r, round, 0) || (*all)[2 * r + 1] != byteOf(r, round, 1)) ++wrong;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(leftEarly.load(), 0);
}

TEST(SharedMemoryExchange, ARankLaterThanThePatienceLeavesEveryProcessEarlyAndNoneWaits) {
  std::vector<std::chrono::nanoseconds> took(2);
  std::vector<int> came(2, -1);
  runWorld({{0}, {1}}, [&](std::size_t p, const World& world, const WorldAllGather& sockets) {
    SharedMemoryExchange exchange(world, sockets);
    if (p == 1) std::this_thread::sleep_for(50ms);
    const auto start = std::chrono::steady_clock::now();
    const auto all = exchange.allGatherWithin({{static_cast<std::uint8_t>(p)}}, 1, 1ms, 5s, kAlive);
    took[p] = std::chrono::steady_clock::now() - start;
    came[p] = all ? 1 : 0;
    // The next exchange meets as usual.
    const auto next = exchange.allGather({{static_cast<std::uint8_t>(10 + p)}}, 1, 5s, kAlive);
    EXPECT_EQ(next, (std::vector<std::uint8_t>{10, 11}));
  });
  EXPECT_EQ(came, (std::vector<int>{0, 0})) << "both processes learn that the exchange was left";
  EXPECT_LT(took[0], 30ms) << "the early process waits its patience, not for the late one";
  EXPECT_LT(took[1], 30ms) << "the late process finds the decision made";
}

// Little patience, one process now and then late: each exchange goes either way, but every process takes the same
// way, and where they met every blob is right. (Exchanges left early do not wait, so the processes drift apart; a
// blocking exchange every 50 rounds brings them together, as a training step's synchronization would.)
TEST(SharedMemoryExchange, EveryProcessTakesTheSameWayWithLittlePatience) {
  constexpr int kRounds = 4000;
  std::vector<std::vector<int>> outcomes(3, std::vector<int>(kRounds, -1));
  std::atomic<int> wrong{0};
  runWorld({{0}, {1}, {2}}, [&](std::size_t p, const World& world, const WorldAllGather& sockets) {
    SharedMemoryExchange exchange(world, sockets);
    for (int round = 0; round < kRounds; ++round) {
      if (p == 2 && round % 101 == 0) std::this_thread::sleep_for(1ms);
      const int r = world.localRanks.front();
      if (round % 50 == 0) exchange.allGather({{0}}, 1, 5s, kAlive);
      const auto all = exchange.allGatherWithin({{byteOf(r, round, 0)}}, 1, 200us, 5s, kAlive);
      outcomes[p][static_cast<std::size_t>(round)] = all ? 1 : 0;
      if (all) {
        for (int q = 0; q < 3; ++q) {
          if ((*all)[static_cast<std::size_t>(q)] != byteOf(q, round, 0)) ++wrong;
        }
      }
    }
  });
  EXPECT_EQ(outcomes[0], outcomes[1]);
  EXPECT_EQ(outcomes[0], outcomes[2]);
  EXPECT_EQ(wrong.load(), 0);
  const auto met = std::count(outcomes[0].begin(), outcomes[0].end(), 1);
  EXPECT_GT(met, 0) << "some exchanges should meet";
  EXPECT_LT(met, kRounds) << "a late process should leave some early";
}

TEST(SharedMemoryExchange, AProcessTheRingsLengthAheadWaitsForRoomThenTimesOutNamingTheLaggard) {
  std::string error;
  runWorld({{0}, {1}}, [&](std::size_t p, const World& world, const WorldAllGather& sockets) {
    SharedMemoryExchange exchange(world, sockets);
    if (p == 1) return;  // never exchanges
    for (std::uint64_t i = 0; i < SharedMemoryExchange::kRing; ++i) {
      EXPECT_FALSE(exchange.allGatherWithin({{1}}, 1, std::chrono::nanoseconds(0), 50ms, kAlive));
    }
    try {
      exchange.allGatherWithin({{1}}, 1, std::chrono::nanoseconds(0), 50ms, kAlive);
      ADD_FAILURE() << "a process went round the ring past one that never came";
    } catch (const Error& thrown) {
      EXPECT_EQ(thrown.code(), ErrorCode::Timeout);
      error = thrown.what();
    }
  });
  EXPECT_NE(error.find("rank(s) 1 are 64 calls behind"), std::string::npos) << error;
}

// The names of this process's segments of `purpose` in /dev/shm.
std::vector<std::string> namesInDevShm(const std::string& purpose) {
  std::vector<std::string> names;
  const std::string prefix = "peerlink-" + purpose + "-" + std::to_string(::getpid()) + "-";
  if (DIR* dir = ::opendir("/dev/shm")) {
    while (const dirent* entry = ::readdir(dir)) {
      if (std::string(entry->d_name).rfind(prefix, 0) == 0) names.emplace_back(entry->d_name);
    }
    ::closedir(dir);
  }
  return names;
}

TEST(HostSegments, EveryProcessMapsEveryRanksSegmentAndNoNameStays) {
  runWorld({{0}, {1, 2}}, [&](std::size_t p, const World& world, const WorldAllGather& sockets) {
    std::vector<HostSegment> segments = mapHostSegments(world, sockets, 4096, "test-segments");
    ASSERT_EQ(segments.size(), 3u);
    for (const int r : world.localRanks) *static_cast<int*>(segments[static_cast<std::size_t>(r)].base) = 100 + r;
    // Every process has written its ranks' (an all-gather is a meeting).
    sockets(std::vector<std::vector<std::uint8_t>>(world.localRanks.size(), std::vector<std::uint8_t>{0}), 1);
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(*static_cast<int*>(segments[static_cast<std::size_t>(r)].base), 100 + r) << "process " << p;
    }
    unmapHostSegments(segments);
    EXPECT_TRUE(segments.empty() || segments.front().base == nullptr);
  });
  EXPECT_TRUE(namesInDevShm("test-segments").empty());
}

TEST(HostSegments, ASegmentOneProcessCannotOpenFailsEveryProcessNamingIt) {
  std::vector<std::string> errors(2);
  runWorld({{0}, {1}}, [&](std::size_t p, const World& world, const WorldAllGather& sockets) {
    bool first = true;
    // Process 0 is told a name that does not exist for rank 1's segment.
    const WorldAllGather lying = [&](const std::vector<std::vector<std::uint8_t>>& blobs, std::size_t bytes) {
      std::vector<std::uint8_t> all = sockets(blobs, bytes);
      if (p == 0 && first) {
        const std::string bogus = "/peerlink-test-refused-0-1-gone";
        std::fill(all.begin() + static_cast<std::ptrdiff_t>(bytes), all.end(), 0);
        std::copy(bogus.begin(), bogus.end(), all.begin() + static_cast<std::ptrdiff_t>(bytes));
      }
      first = false;
      return all;
    };
    try {
      std::vector<HostSegment> segments = mapHostSegments(world, lying, 4096, "test-refused");
      unmapHostSegments(segments);
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::SystemError);
      errors[p] = error.what();
    }
  });
  for (const std::string& error : errors) EXPECT_NE(error.find("rank(s) 0 could not"), std::string::npos) << error;
  EXPECT_NE(errors[0].find("shm_open of /peerlink-test-refused-0-1-gone"), std::string::npos) << errors[0];
  EXPECT_TRUE(namesInDevShm("test-refused").empty());
}

// A /dev/shm with less room than the segments (a container's 64 MiB, scaled down): making them fails on every
// process with an Error naming /dev/shm and the fix -- never a segment that kills its process with SIGBUS at the
// first write past the room.
TEST(HostSegments, TooSmallADevShmIsNamedNotASigbusLater) {
  constexpr int kRoomKib = 1024;
  constexpr std::size_t kSegmentBytes = std::size_t{768} << 10;  // one fits, two do not
  testing::Child probe([&] { return testing::mountSmallTmpfs("/dev/shm", kRoomKib).empty() ? testing::kChildOk : 1; });
  if (probe.wait() != testing::kChildOk) {
    GTEST_SKIP() << "cannot mount a tmpfs over /dev/shm here (needs root)";
  }
  testing::Child child([&] {
    if (!testing::mountSmallTmpfs("/dev/shm", kRoomKib).empty()) return testing::kChildWrongResult;
    std::vector<std::string> errors(2);
    runWorld({{0}, {1}}, [&](std::size_t p, const World& world, const WorldAllGather& sockets) {
      try {
        std::vector<HostSegment> segments = mapHostSegments(world, sockets, kSegmentBytes, "test-small");
        for (const int r : world.localRanks) {
          std::memset(segments[static_cast<std::size_t>(r)].base, 1, kSegmentBytes);
        }
        unmapHostSegments(segments);
      } catch (const Error& error) {
        if (error.code() == ErrorCode::SystemError) errors[p] = error.what();
      }
    });
    for (const std::string& error : errors) {
      if (error.find("could not create or open the segments") == std::string::npos) {
        std::fprintf(stderr, "[child] not the agreed failure: '%s'\n", error.c_str());
        return testing::kChildWrongResult;
      }
    }
    // The process that could not reserve its segment says why, and what to do.
    const std::string& why = errors[0].find("/dev/shm has no room") != std::string::npos ? errors[0] : errors[1];
    if (why.find("/dev/shm has no room for the 786432 bytes") == std::string::npos ||
        why.find("--shm-size") == std::string::npos) {
      std::fprintf(stderr, "[child] the failure does not name /dev/shm's room: '%s'\n", why.c_str());
      return testing::kChildWrongResult;
    }
    return namesInDevShm("test-small").empty() ? testing::kChildOk : testing::kChildWrongResult;
  });
  EXPECT_EQ(child.wait(), testing::kChildOk) << "a signal's exit here is the SIGBUS of an unreserved segment";
}

}  // namespace
}  // namespace peerlink::coll
