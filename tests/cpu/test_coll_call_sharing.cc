// Which calls across processes share their buffers at the call, which buffers a rank's card names, and the cache of
// calls whose windows stay open (src/coll/call_sharing.hpp): every rank must come to the same answers from what it
// shares with the others, so each rule is checked here over every input it takes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "coll/arena_ring.hpp"
#include "coll/call_sharing.hpp"
#include "coll/cross_process_way.hpp"
#include "coll/sharing_choice.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

TEST(CallSharing, TheSettingsNames) {
  EXPECT_EQ(bufferSharingNamed("AUTO"), BufferSharing::Auto);
  EXPECT_EQ(bufferSharingNamed("OFF"), BufferSharing::Off);
  EXPECT_EQ(bufferSharingNamed("ON"), BufferSharing::On);
  for (const BufferSharing sharing : {BufferSharing::Auto, BufferSharing::Off, BufferSharing::On}) {
    EXPECT_EQ(bufferSharingNamed(bufferSharingName(sharing)), sharing);
  }
  EXPECT_THROW(bufferSharingNamed("on"), Error);
  EXPECT_THROW(bufferSharingNamed(""), Error);
}

TEST(CallSharing, AutoSharesFromItsSizeOnAndOffAlwaysAndNeverNoneWhileCapturing) {
  for (const Collective collective :
       {Collective::AllReduce, Collective::Broadcast, Collective::Reduce, Collective::AllGather,
        Collective::ReduceScatter, Collective::AllToAll, Collective::SendRecv}) {
    SCOPED_TRACE(collectiveName(collective));
    const std::size_t from = shareFromBytes(collective);
    EXPECT_GE(from, std::size_t{1} << 20) << "below LL's sizes the exchange's wait would cost more than the call";
    for (const std::size_t bytes : {std::size_t{1}, from - 1, from, from + 1, std::size_t{1} << 30}) {
      SCOPED_TRACE(std::to_string(bytes) + " bytes");
      EXPECT_EQ(sharesAtCall(BufferSharing::Auto, collective, bytes, false), bytes >= from);
      EXPECT_TRUE(sharesAtCall(BufferSharing::On, collective, bytes, false));
      EXPECT_FALSE(sharesAtCall(BufferSharing::Off, collective, bytes, false));
      for (const BufferSharing mode : {BufferSharing::Auto, BufferSharing::On, BufferSharing::Off}) {
        EXPECT_FALSE(sharesAtCall(mode, collective, bytes, true)) << "a captured call would keep the peers' buffers";
      }
    }
    EXPECT_FALSE(sharesAtCall(BufferSharing::On, collective, 0, false)) << "a call of nothing has nothing to share";
  }
}

// Calls of DDP's 25 MiB bucket cap stage under AUTO: a training step's ranks reach each call apart, and waiting for
// one another cost more than sharing saved. Broadcasts and reduces, outside the step, share sooner.
TEST(CallSharing, AutoLeavesATrainingStepsBucketsStagedAndSharesRootedCallsSooner) {
  const std::size_t ddpBucket = std::size_t{25} << 20;
  for (const Collective collective :
       {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll}) {
    EXPECT_FALSE(sharesAtCall(BufferSharing::Auto, collective, ddpBucket, false)) << collectiveName(collective);
  }
  for (const Collective collective : {Collective::Broadcast, Collective::Reduce}) {
    EXPECT_LT(shareFromBytes(collective), shareFromBytes(Collective::AllReduce)) << collectiveName(collective);
  }
}

TEST(CallSharing, ARootedCallsOtherRanksNameNoBufferOnTheRootsSide) {
  for (int root = 0; root < 4; ++root) {
    for (int rank = 0; rank < 4; ++rank) {
      const UsedBuffers broadcast = usedBuffersOf(Collective::Broadcast, rank, root);
      EXPECT_EQ(broadcast.send, rank == root) << "broadcast, rank " << rank << ", root " << root;
      EXPECT_TRUE(broadcast.recv);
      const UsedBuffers reduce = usedBuffersOf(Collective::Reduce, rank, root);
      EXPECT_TRUE(reduce.send);
      EXPECT_EQ(reduce.recv, rank == root) << "reduce, rank " << rank << ", root " << root;
    }
  }
  for (const Collective collective :
       {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll}) {
    const UsedBuffers used = usedBuffersOf(collective, 1, 0);
    EXPECT_TRUE(used.send && used.recv) << collectiveName(collective);
  }
}

std::vector<std::uint8_t> keyOf(int call) {
  return std::vector<std::uint8_t>(sizeof(CallCard) * 2, static_cast<std::uint8_t>(call));
}

TEST(SharedCallCache, AHitBecomesTheLatestAndTheLeastRecentGoesFirst) {
  SharedCallCache cache(3);
  for (int call = 1; call <= 3; ++call) EXPECT_FALSE(cache.add({keyOf(call), 10 * call, 10 * call + 1}).has_value());
  EXPECT_EQ(cache.size(), 3u);
  const SharedCallCache::Entry* hit = cache.find(keyOf(1));
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->sendWindow, 10);
  EXPECT_EQ(hit->recvWindow, 11);
  EXPECT_EQ(cache.entries().front().key, keyOf(1)) << "a hit is the latest";
  // Call 2 is now the least recent: the next call evicts it, not call 1.
  const auto evicted = cache.add({keyOf(4), 40, 41});
  ASSERT_TRUE(evicted.has_value());
  EXPECT_EQ(evicted->key, keyOf(2));
  EXPECT_EQ(evicted->sendWindow, 20);
  EXPECT_EQ(evicted->recvWindow, 21);
  EXPECT_EQ(cache.find(keyOf(2)), nullptr);
  EXPECT_NE(cache.find(keyOf(3)), nullptr);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.find(keyOf(9)), nullptr);
}

// Every rank feeds its cache the same keys in the same order (the exchanged cards), so each sees the same hits and
// evicts the same entries: two caches fed one sequence stay equal throughout.
TEST(SharedCallCache, TheSameCallsGiveEveryRankTheSameHitsAndEvictions) {
  SharedCallCache a(kSharedCallsKept);
  SharedCallCache b(kSharedCallsKept);
  std::uint64_t state = 12345;
  int windows = 0;
  for (int step = 0; step < 2000; ++step) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::vector<std::uint8_t> key = keyOf(static_cast<int>((state >> 33) % 40));
    const SharedCallCache::Entry* hitA = a.find(key);
    const SharedCallCache::Entry* hitB = b.find(key);
    ASSERT_EQ(hitA == nullptr, hitB == nullptr) << "step " << step;
    if (hitA != nullptr) {
      EXPECT_EQ(hitA->sendWindow, hitB->sendWindow);
      continue;
    }
    windows += 2;
    const auto goneA = a.add({key, windows - 1, windows});
    const auto goneB = b.add({key, windows - 1, windows});
    ASSERT_EQ(goneA.has_value(), goneB.has_value());
    if (goneA) {
      EXPECT_EQ(goneA->sendWindow, goneB->sendWindow);
    }
    EXPECT_LE(a.size(), kSharedCallsKept);
  }
  EXPECT_EQ(a.size(), kSharedCallsKept);
}

}  // namespace
}  // namespace peerlink::coll

namespace peerlink::coll {
namespace {

TEST(CallSharing, PatienceGrowsWithTheCallAndStaysBelowAMillisecond) {
  using std::chrono::microseconds;
  EXPECT_GE(sharingPatience(std::size_t{2} << 20), microseconds(5))
      << "processes in step arrive microseconds apart: less patience would stage their calls";
  std::chrono::nanoseconds before{0};
  for (std::size_t bytes = 1; bytes <= (std::size_t{1} << 30); bytes *= 2) {
    const std::chrono::nanoseconds patience = sharingPatience(bytes);
    EXPECT_GE(patience, before) << bytes << " bytes";
    before = patience;
  }
  EXPECT_GT(sharingPatience(std::size_t{512} << 20), 4 * sharingPatience(std::size_t{2} << 20))
      << "a larger call saves more by sharing, so is worth a longer wait";
  EXPECT_LT(sharingPatience(std::size_t{512} << 20), microseconds(1000))
      << "a process never waits a millisecond for a late peer: sharing saves less than that";
}

}  // namespace
}  // namespace peerlink::coll

namespace peerlink::coll {
namespace {

// A world of processes[p] = the GPUs (indices) of process p's ranks, ranks numbered process after process.
World worldOf(const std::vector<std::vector<int>>& processes) {
  World world;
  for (std::size_t p = 0; p < processes.size(); ++p) {
    for (const int gpu : processes[p]) {
      RankCard card;
      card.hostId = 7;
      card.pid = 1000 + static_cast<std::int64_t>(p);
      world.cards.push_back(card);
      world.gpu.push_back(gpu);
    }
  }
  world.nranks = static_cast<int>(world.cards.size());
  world.spansProcesses = processes.size() > 1;
  return world;
}

TEST(CallSharing, OnlyWorldsWhoseProcessesEachDriveOneGpuShareAtTheCall) {
  EXPECT_TRUE(everyProcessOnOneGpu(worldOf({{0}, {1}})));
  EXPECT_TRUE(everyProcessOnOneGpu(worldOf({{0}, {1}, {2}, {3}})));
  EXPECT_TRUE(everyProcessOnOneGpu(worldOf({{0, 0}, {1, 1}}))) << "ranks sharing their process's one GPU";
  EXPECT_TRUE(everyProcessOnOneGpu(worldOf({{0}, {0}}))) << "processes sharing a GPU, one each";
  EXPECT_FALSE(everyProcessOnOneGpu(worldOf({{0, 1}, {2, 3}})));
  EXPECT_FALSE(everyProcessOnOneGpu(worldOf({{0, 1}, {0, 1}}))) << "4 ranks on 2 GPUs, two a process";
  EXPECT_FALSE(everyProcessOnOneGpu(worldOf({{0}, {1}, {2, 3}}))) << "one process of two GPUs is enough";
}

// The way of a call across processes, in submitCollective's order: own buffers where the kernels work through their
// stages (and for an empty call), registered windows, shared at the call (eager only), the arena ring where the
// arenas hold its area and the setting takes the call, else the staging windows.
TEST(CrossProcessWay, InTheCommunicatorsOrder) {
  CrossProcessSettings settings;
  settings.windowBytes = std::size_t{128} << 20;
  settings.hasRingArea = true;
  settings.maxBlocks = 132;
  const std::size_t big = std::size_t{256} << 20;
  const auto way = [&](Collective collective, std::size_t bytes, DataFlow flow, bool registered, bool capturing) {
    return crossProcessWay(settings, collective, bytes, 4, flow, registered, capturing);
  };
  const Collective ar = Collective::AllReduce;
  EXPECT_EQ(way(ar, big, DataFlow::ThroughStages, true, false), CrossProcessWay::OwnBuffers);
  EXPECT_EQ(way(ar, 0, DataFlow::ReadsPeers, false, false), CrossProcessWay::OwnBuffers);
  EXPECT_EQ(way(ar, big, DataFlow::ReadsPeers, true, true), CrossProcessWay::RegisteredWindows);
  EXPECT_EQ(way(ar, big, DataFlow::ReadsPeers, false, false), CrossProcessWay::SharedAtCall);
  EXPECT_EQ(way(ar, big, DataFlow::ReadsPeers, false, true), CrossProcessWay::ArenaRing);
  // AUTO shares from shareFromBytes and runs the arena ring from arenaRingAutoMinBytes: between, the ring.
  EXPECT_EQ(way(ar, arenaRingAutoMinBytes(ar), DataFlow::ReadsPeers, false, false), CrossProcessWay::ArenaRing);
  EXPECT_EQ(way(Collective::AllGather, big, DataFlow::ReadsPeers, false, true), CrossProcessWay::StagingWindows);
  settings.sharing = BufferSharing::Off;
  EXPECT_EQ(way(ar, big, DataFlow::ReadsPeers, false, false), CrossProcessWay::ArenaRing);
  settings.hasRingArea = false;  // PEERLINK_COLL_ARENA_RING=OFF or no window
  EXPECT_EQ(way(ar, big, DataFlow::ReadsPeers, false, false), CrossProcessWay::StagingWindows);
  settings.sharing = BufferSharing::On;
  EXPECT_EQ(way(ar, 1024, DataFlow::ReadsPeers, false, false), CrossProcessWay::SharedAtCall);
}

TEST(CrossProcessWay, EachWayIsNamedAndDescribed) {
  CrossProcessSettings settings;
  settings.windowBytes = std::size_t{128} << 20;
  settings.stageSerially = true;
  settings.maxBlocks = 132;
  const std::size_t bytes = std::size_t{64} << 20;
  EXPECT_STREQ(crossProcessWayName(CrossProcessWay::StagingWindows), "staging_windows");
  EXPECT_STREQ(crossProcessWayName(CrossProcessWay::SharedAtCall), "shared_at_call");
  const std::string staged =
      describeCrossProcessWay(CrossProcessWay::StagingWindows, settings, Collective::AllReduce, bytes, 2);
  EXPECT_NE(staged.find("through the staging windows (chunks of half a window, 67108864 bytes"), std::string::npos)
      << staged;
  EXPECT_NE(staged.find("one after another"), std::string::npos) << staged;
  const std::string ring =
      describeCrossProcessWay(CrossProcessWay::ArenaRing, settings, Collective::AllReduce, bytes, 2);
  EXPECT_EQ(ring.rfind("as the arena ring (64 blocks", 0), 0u) << ring;  // above kArenaRingLeanMaxBytes
}

}  // namespace
}  // namespace peerlink::coll
