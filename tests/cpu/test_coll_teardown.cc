// A communicator's end without waiting for other communicators' work: the teardown's decisions (coll/teardown_plan.hpp)
// and the process's held resources (core/gpu_work.hpp) driven by fake GPU work -- released at once where no work
// runs, held while some does (however long), released by the first drain that finds none, never where held until
// exit, and the held resources' own work counted too.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "coll/teardown_plan.hpp"
#include "core/gpu_work.hpp"

namespace peerlink {
namespace {

using namespace std::chrono_literals;

// GPU work that finishes when the test says.
class FakeWork final : public GpuWork {
 public:
  explicit FakeWork(bool done) : done_(done) { registerGpuWork(this); }
  ~FakeWork() override { unregisterGpuWork(this); }
  FakeWork(const FakeWork&) = delete;
  FakeWork& operator=(const FakeWork&) = delete;
  bool finished() const noexcept override { return done_; }
  void finish() { done_ = true; }

 private:
  std::atomic<bool> done_;
};

// Resources whose release the test sees: `released` is set when the last owner lets go.
HeldResources watched(std::shared_ptr<std::atomic<bool>> released, std::size_t bytes = 1 << 20) {
  HeldResources resources;
  resources.what = "test resources";
  resources.bytes = bytes;
  resources.held = std::shared_ptr<void>(new int(0), [released](void* p) {
    *released = true;
    delete static_cast<int*>(p);
  });
  return resources;
}

coll::TeardownFacts healthy() {
  coll::TeardownFacts facts;
  facts.ownWorkFinished = true;
  facts.spansProcesses = true;
  return facts;
}

TEST(TeardownPlan, AHealthyEndFreesWhenIdleAndStopsNothing) {
  const coll::TeardownPlan plan = coll::planTeardown(healthy());
  EXPECT_EQ(plan.release, coll::TeardownRelease::WhenIdle);
  EXPECT_FALSE(plan.raiseAbortWord);
  EXPECT_EQ(plan.reason, "");
}

TEST(TeardownPlan, OwnKernelsStillQueuedAreToldToStop) {
  coll::TeardownFacts facts = healthy();
  facts.ownWorkFinished = false;
  coll::TeardownPlan plan = coll::planTeardown(facts);
  EXPECT_EQ(plan.release, coll::TeardownRelease::WhenIdle);
  EXPECT_TRUE(plan.raiseAbortWord);
  EXPECT_NE(plan.reason.find("did not finish"), std::string::npos) << plan.reason;
  // Already aborted: the word is up.
  facts.aborted = true;
  plan = coll::planTeardown(facts);
  EXPECT_FALSE(plan.raiseAbortWord);
  EXPECT_EQ(plan.release, coll::TeardownRelease::WhenIdle);
}

TEST(TeardownPlan, ALegacyIpcArenaAnotherProcessMayStillStoreIntoIsHeldUntilExit) {
  for (const int failure : {0, 1, 2}) {
    coll::TeardownFacts facts = healthy();
    facts.legacyIpcArena = true;
    facts.aborted = failure == 0;
    facts.kernelsGaveUp = failure == 1;
    facts.ownWorkFinished = failure != 2;
    const coll::TeardownPlan plan = coll::planTeardown(facts);
    EXPECT_EQ(plan.release, coll::TeardownRelease::UntilExit) << failure;
    EXPECT_NE(plan.reason.find("legacy IPC"), std::string::npos) << plan.reason;
  }
  // A healthy end: every peer's stores into it were awaited by its own kernels.
  coll::TeardownFacts facts = healthy();
  facts.legacyIpcArena = true;
  EXPECT_EQ(coll::planTeardown(facts).release, coll::TeardownRelease::WhenIdle);
}

TEST(TeardownPlan, ACumemArenaIsFreedAfterAFailure) {
  // The importers' mappings keep cuMem memory alive: a late store lands in memory nobody else gets.
  coll::TeardownFacts facts = healthy();
  facts.aborted = true;
  facts.kernelsGaveUp = true;
  EXPECT_EQ(coll::planTeardown(facts).release, coll::TeardownRelease::WhenIdle);
}

TEST(TeardownPlan, WorkThatCouldNotBeTrackedIsHeldUntilExit) {
  coll::TeardownFacts facts = healthy();
  facts.ownWorkTracked = false;
  const coll::TeardownPlan plan = coll::planTeardown(facts);
  EXPECT_EQ(plan.release, coll::TeardownRelease::UntilExit);
  EXPECT_NE(plan.reason.find("tracked"), std::string::npos) << plan.reason;
}

TEST(TeardownPlan, AnAbortedEndWaitsSecondsAHealthyOneTheKernelsDeadline) {
  const std::uint64_t hour = std::uint64_t{3600000} * 1000000u;
  EXPECT_EQ(coll::ownWorkBudget(true, hour), coll::kAbortedDrain);
  EXPECT_EQ(coll::ownWorkBudget(false, hour), std::chrono::milliseconds(3600000) + coll::kDrainMargin);
  EXPECT_EQ(coll::ownWorkBudget(false, 3000 * 1000000u), 3000ms + coll::kDrainMargin);
  EXPECT_LT(coll::kAbortedDrain + coll::kIdleWait, 5s) << "an abort beside a stalled communicator must end fast";
}

// A destroy right after a long run of healthy calls finishes them: more budgets while no kernel gave up and the
// word is down, never more than kHealthyDrainRounds in all; an aborted end or a stalled kernel stops at once.
TEST(TeardownPlan, HealthyQueuedWorkIsWaitedForUpToTenBudgets) {
  EXPECT_TRUE(coll::drainsAnotherRound(false, false, 1));
  EXPECT_TRUE(coll::drainsAnotherRound(false, false, coll::kHealthyDrainRounds - 1));
  EXPECT_FALSE(coll::drainsAnotherRound(false, false, coll::kHealthyDrainRounds));
  EXPECT_FALSE(coll::drainsAnotherRound(true, false, 1));
  EXPECT_FALSE(coll::drainsAnotherRound(false, true, 1));
}

TEST(HeldResources, ReleasedAtOnceWhereNoWorkRuns) {
  const FakeWork idle(true);
  auto released = std::make_shared<std::atomic<bool>>(false);
  const HeldCounts before = heldCounts();
  EXPECT_TRUE(releaseWhenIdle(watched(released), WorkClock::now()));
  EXPECT_TRUE(*released);
  EXPECT_EQ(heldCounts().waiting, before.waiting);
}

TEST(HeldResources, HeldWhileWorkRunsAndReleasedByTheFirstDrainThatFindsNone) {
  FakeWork stalled(false);
  auto released = std::make_shared<std::atomic<bool>>(false);
  const HeldCounts before = heldCounts();
  const auto start = WorkClock::now();
  EXPECT_FALSE(releaseWhenIdle(watched(released, 3 << 20), start + 50ms, "a test"));
  EXPECT_GE(WorkClock::now() - start, 50ms) << "it polls until its deadline";
  EXPECT_FALSE(*released);
  HeldCounts now = heldCounts();
  EXPECT_EQ(now.waiting, before.waiting + 1);
  EXPECT_EQ(now.waitingBytes, before.waitingBytes + (3 << 20));
  EXPECT_EQ(releaseHeldIfIdle(), 0u);  // still running
  EXPECT_FALSE(*released);
  stalled.finish();
  EXPECT_EQ(releaseHeldIfIdle(), 1u);
  EXPECT_TRUE(*released);
  now = heldCounts();
  EXPECT_EQ(now.waiting, before.waiting);
  EXPECT_EQ(now.releasedLater, before.releasedLater + 1);
}

TEST(HeldResources, WorkThatFinishesWithinTheWaitLetsThemGoThen) {
  FakeWork running(false);
  auto released = std::make_shared<std::atomic<bool>>(false);
  std::thread finisher([&] {
    std::this_thread::sleep_for(30ms);
    running.finish();
  });
  const auto start = WorkClock::now();
  EXPECT_TRUE(releaseWhenIdle(watched(released), start + 10s));
  finisher.join();
  EXPECT_TRUE(*released);
  EXPECT_LT(WorkClock::now() - start, 5s);
}

TEST(HeldResources, TheirOwnWorkKeepsEveryHeldOneBack) {
  // Held resources that carry work of their own (a communicator whose kernel is queued behind another's) hold back
  // the release of every held resource until it has finished too: a free could wait for that kernel.
  FakeWork other(false);
  auto ownWork = std::make_shared<FakeWork>(false);
  auto firstReleased = std::make_shared<std::atomic<bool>>(false);
  HeldResources first = watched(firstReleased);
  first.held = std::shared_ptr<void>(new int(0), [firstReleased, ownWork](void* p) {
    *firstReleased = true;
    delete static_cast<int*>(p);
  });
  auto secondReleased = std::make_shared<std::atomic<bool>>(false);
  EXPECT_FALSE(releaseWhenIdle(std::move(first), WorkClock::now()));
  EXPECT_FALSE(releaseWhenIdle(watched(secondReleased), WorkClock::now()));
  FakeWork* own = ownWork.get();
  ownWork.reset();  // now only the held resources keep it
  other.finish();
  EXPECT_EQ(releaseHeldIfIdle(), 0u) << "the first one's own work still runs";
  own->finish();
  EXPECT_EQ(releaseHeldIfIdle(), 2u);
  EXPECT_TRUE(*firstReleased);
  EXPECT_TRUE(*secondReleased);
}

TEST(HeldResources, HeldUntilExitAreNeverReleased) {
  auto released = std::make_shared<std::atomic<bool>>(false);
  const HeldCounts before = heldCounts();
  holdUntilExit(watched(released, 5 << 20), "a test");
  const HeldCounts after = heldCounts();
  EXPECT_EQ(after.untilExit, before.untilExit + 1);
  EXPECT_EQ(after.untilExitBytes, before.untilExitBytes + (5 << 20));
  EXPECT_EQ(releaseHeldIfIdle(), 0u);
  EXPECT_FALSE(*released);
}

TEST(WorkTracker, NothingRecordedIsFinishedAndALostTrackIsKept) {
  WorkTracker tracker;
  EXPECT_TRUE(tracker.finished());
  EXPECT_EQ(tracker.unfinishedStreams(), 0u);
  EXPECT_TRUE(tracker.waitFinished(WorkClock::now()));
  EXPECT_TRUE(tracker.tracksAll());
  tracker.lostTrack();
  EXPECT_FALSE(tracker.tracksAll());
  EXPECT_TRUE(gpuWorkFinished());
}

// Work whose finished() blocks until released, so that another thread holds the registry's lock meanwhile.
class SlowWork final : public GpuWork {
 public:
  SlowWork() { registerGpuWork(this); }
  ~SlowWork() override { unregisterGpuWork(this); }
  SlowWork(const SlowWork&) = delete;
  SlowWork& operator=(const SlowWork&) = delete;
  bool finished() const noexcept override {
    inside = true;
    while (!release) std::this_thread::sleep_for(1ms);
    return true;
  }
  mutable std::atomic<bool> inside{false};
  std::atomic<bool> release{false};
};

// A fork while another thread holds the held list's lock: the child must not inherit it locked (its next
// communicator's creation or end would hang there). The fork waits for the lock, and the child can take it.
TEST(HeldResources, AForkWhileAnotherThreadHoldsTheListLeavesTheChildAbleToUseIt) {
  SlowWork work;
  std::thread poller([] { gpuWorkFinished(); });  // takes the lock and asks `work`, which blocks
  while (!work.inside) std::this_thread::sleep_for(1ms);
  std::thread releaser([&work] {
    std::this_thread::sleep_for(200ms);  // the fork below has started by then, waiting for the lock
    work.release = true;
  });
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(5);  // a child that hangs on the lock is killed, and the test fails
    (void)heldCounts();
    ::_exit(0);
  }
  releaser.join();
  poller.join();
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status)) << "the child hung on the held list's lock (killed by signal "
                                 << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ")";
  if (WIFEXITED(status)) {
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
}

}  // namespace
}  // namespace peerlink
