// LaunchThreads (src/coll/launch_threads.hpp): every index's job runs exactly once per run, on its own thread
// while that thread is awake and on the caller's while it is parked, run() returns only after every job has
// returned, the lowest index's exception wins, and a thread whose enter() fails hands its jobs back.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "coll/launch_threads.hpp"

namespace peerlink::coll {
namespace {

using namespace std::chrono_literals;

// What one run saw: the thread and `here` of each index's job.
struct RunRecord {
  std::mutex mutex;
  std::map<int, std::thread::id> thread;
  std::map<int, bool> here;
  std::map<int, int> calls;

  void note(int index, bool isHere) {
    const std::lock_guard<std::mutex> lock(mutex);
    thread[index] = std::this_thread::get_id();
    here[index] = isHere;
    ++calls[index];
  }
};

TEST(LaunchThreads, AwakeThreadsRunTheirIndexOnceEachTheCallerIndexZero) {
  std::mutex mutex;
  std::map<int, std::thread::id> entered;
  LaunchThreads threads(
      4,
      [&](int index) {
        const std::lock_guard<std::mutex> lock(mutex);
        entered[index] = std::this_thread::get_id();
      },
      std::chrono::hours(1), std::chrono::hours(1));
  for (int run = 0; run < 50; ++run) {
    RunRecord record;
    threads.run([&](int index, bool here) { record.note(index, here); });
    ASSERT_EQ(record.calls.size(), 4u);
    for (int index = 0; index < 4; ++index) EXPECT_EQ(record.calls[index], 1) << "index " << index;
    EXPECT_TRUE(record.here[0]);
    EXPECT_EQ(record.thread[0], std::this_thread::get_id());
    for (int index = 1; index < 4; ++index) {
      // Awake for an hour: every job on its own thread, the one that ran enter(index).
      EXPECT_FALSE(record.here[index]) << "index " << index;
      const std::lock_guard<std::mutex> lock(mutex);
      EXPECT_EQ(record.thread[index], entered[index]) << "index " << index;
    }
  }
  const std::lock_guard<std::mutex> lock(mutex);
  EXPECT_EQ(entered.size(), 3u);  // threads 1..3 entered, index 0 has no thread
  EXPECT_EQ(entered.count(0), 0u);
}

TEST(LaunchThreads, ParkedThreadsJobsRunOnTheCaller) {
  // Asleep as soon as they start (or finish a job), never woken. No take-back (an hour): a job runs here only
  // because its thread was asleep when posted, never because a busy machine kept an awake thread off a core
  // for 20 us (so ran CI once, reading an awake thread as parked).
  LaunchThreads threads(3, nullptr, 0ns, std::chrono::hours(1));
  // A thread not yet scheduled is still awake and takes its job; wait until both have parked.
  bool parked = false;
  for (int run = 0; run < 2000 && !parked; ++run) {
    RunRecord record;
    threads.run([&](int index, bool here) { record.note(index, here); });
    parked = record.here[1] && record.here[2];
    if (!parked) std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(parked);
  for (int run = 0; run < 5; ++run) {
    RunRecord record;
    threads.run([&](int index, bool here) { record.note(index, here); });
    for (int index = 0; index < 3; ++index) {
      EXPECT_EQ(record.calls[index], 1);
      EXPECT_TRUE(record.here[index]) << "index " << index;
      EXPECT_EQ(record.thread[index], std::this_thread::get_id());
    }
  }
}

TEST(LaunchThreads, SetsInQuickSuccessionWakeParkedThreads) {
  LaunchThreads threads(3, nullptr, 200ms, std::chrono::hours(1));
  // Past the window: asleep. The first run after it does every job here and wakes no one (a lone call). On
  // a loaded machine a thread may not have run since its window closed, so is still awake and takes its
  // job: then try again after another window (runs spaced that far apart wake no one).
  bool lone = false;
  for (int attempt = 0; attempt < 20 && !lone; ++attempt) {
    std::this_thread::sleep_for(400ms);
    RunRecord record;
    threads.run([&](int index, bool here) { record.note(index, here); });
    lone = record.here[1] && record.here[2];
  }
  ASSERT_TRUE(lone) << "the threads never fell asleep";
  // The next comes within the window: its jobs still run here (the threads are asleep), and it wakes them;
  // the runs after it find them awake.
  RunRecord second;
  threads.run([&](int index, bool here) { second.note(index, here); });
  EXPECT_TRUE(second.here[1] && second.here[2]);
  bool movedToThreads = false;
  for (int run = 0; run < 200 && !movedToThreads; ++run) {
    RunRecord record;
    threads.run([&](int index, bool here) { record.note(index, here); });
    movedToThreads = !record.here[1] && !record.here[2];
    if (!movedToThreads) std::this_thread::sleep_for(1ms);
  }
  EXPECT_TRUE(movedToThreads) << "the woken threads never took a job";
}

TEST(LaunchThreads, RunReturnsOnlyAfterEveryJobHasReturned) {
  LaunchThreads threads(4, nullptr, std::chrono::hours(1));
  for (int run = 0; run < 10; ++run) {
    std::atomic<int> finished{0};
    threads.run([&](int index, bool) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2 * index));
      finished.fetch_add(1);
    });
    EXPECT_EQ(finished.load(), 4);
  }
}

TEST(LaunchThreads, TheLowestIndexThatThrewIsRethrownAfterEveryJobReturned) {
  LaunchThreads threads(4, nullptr, std::chrono::hours(1));
  std::atomic<int> finished{0};
  try {
    threads.run([&](int index, bool) {
      if (index == 3) throw std::runtime_error("three");
      if (index == 1) {
        std::this_thread::sleep_for(5ms);
        finished.fetch_add(1);
        throw std::runtime_error("one");
      }
      std::this_thread::sleep_for(10ms);
      finished.fetch_add(1);
    });
    FAIL() << "nothing thrown";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()), "one");
  }
  EXPECT_EQ(finished.load(), 3);
  // The caller's own index throwing: still rethrown, the others done first.
  finished = 0;
  EXPECT_THROW(threads.run([&](int index, bool) {
    if (index == 0) throw std::logic_error("zero");
    std::this_thread::sleep_for(5ms);
    finished.fetch_add(1);
  }),
               std::logic_error);
  EXPECT_EQ(finished.load(), 3);
  // And the next run is clean.
  RunRecord record;
  threads.run([&](int index, bool here) { record.note(index, here); });
  EXPECT_EQ(record.calls.size(), 4u);
}

TEST(LaunchThreads, AThreadWhoseEnterFailedHandsItsJobsToTheCaller) {
  LaunchThreads threads(
      3,
      [](int index) {
        if (index == 2) throw std::runtime_error("no GPU for index 2");
      },
      std::chrono::hours(1), std::chrono::hours(1));
  // Thread 2 may not have run enter() yet when the first job comes: that job then fails with enter()'s
  // error; once it has, index 2 runs on the caller.
  bool sawHere = false;
  for (int run = 0; run < 200 && !sawHere; ++run) {
    RunRecord record;
    try {
      threads.run([&](int index, bool here) { record.note(index, here); });
    } catch (const std::runtime_error& error) {
      EXPECT_EQ(std::string(error.what()), "no GPU for index 2");
      continue;
    }
    EXPECT_EQ(record.calls[2], 1);
    sawHere = record.here[2];
    EXPECT_FALSE(record.here[1]);
  }
  EXPECT_TRUE(sawHere);
}

TEST(LaunchThreads, AJobItsThreadDoesNotTakeIsTakenBack) {
  // Thread 2 is awake (it takes jobs) but busy in enter() for 300 ms, as a descheduled thread would be: the
  // caller takes its job back after 50 ms (the communicator's 20 us would make the later hand-over depend on
  // this machine's load) and runs it itself instead of waiting.
  LaunchThreads threads(
      3,
      [](int index) {
        if (index == 2) std::this_thread::sleep_for(300ms);
      },
      std::chrono::hours(1), 50ms);
  const auto start = std::chrono::steady_clock::now();
  RunRecord record;
  threads.run([&](int index, bool here) { record.note(index, here); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 250ms);
  EXPECT_EQ(record.calls[2], 1);
  EXPECT_TRUE(record.here[2]);
  EXPECT_EQ(record.thread[2], std::this_thread::get_id());
  EXPECT_EQ(threads.stats().takenBack, 1u);
  EXPECT_EQ(threads.stats().sets, 1u);
  // Once it has entered, it takes its jobs again.
  std::this_thread::sleep_for(400ms);
  bool handedOver = false;
  for (int run = 0; run < 200 && !handedOver; ++run) {
    RunRecord later;
    threads.run([&](int index, bool here) { later.note(index, here); });
    handedOver = !later.here[2];
  }
  EXPECT_TRUE(handedOver);
  EXPECT_GE(threads.stats().handedOver, 2u);  // thread 1's first, thread 2's last at least
}

TEST(LaunchThreads, RunTakesANamedJobToo) {
  LaunchThreads threads(3, nullptr, std::chrono::hours(1));
  RunRecord record;
  const auto job = [&](int index, bool here) { record.note(index, here); };  // an lvalue, const
  threads.run(job);
  EXPECT_EQ(record.calls.size(), 3u);
}

TEST(LaunchThreads, OneIndexHasNoThreads) {
  LaunchThreads threads(
      1, [](int) { FAIL() << "no thread should enter"; }, std::chrono::hours(1));
  EXPECT_EQ(threads.count(), 1);
  RunRecord record;
  threads.run([&](int index, bool here) { record.note(index, here); });
  EXPECT_EQ(record.calls.size(), 1u);
  EXPECT_TRUE(record.here[0]);
}

TEST(LaunchThreads, DestroyedWhileAwakeOrParkedStopsPromptly) {
  const auto start = std::chrono::steady_clock::now();
  { LaunchThreads awake(4, nullptr, std::chrono::hours(1)); }
  {
    LaunchThreads parked(4, nullptr, 0ns);
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

}  // namespace
}  // namespace peerlink::coll
